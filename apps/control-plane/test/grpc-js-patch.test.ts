import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The gateway depends on five changes to @grpc/grpc-js (patches/, docs/agent-gateway.md "Why a
// patch"): response compression, per-method receive limits, and three client errors that were
// INTERNAL or a crash. This test fails loudly when the installed grpc-js is not the version the
// patch was written for, or when any of the five is missing from what is installed: an upgrade
// must carry each one over (or prove upstream has it) before anything else runs.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
const require = createRequire(join(root, 'apps/control-plane/package.json'));
const grpcDir = dirname(require.resolve('@grpc/grpc-js/package.json'));

const PATCHED = [
  'svc patch: response compression',
  'svc patch: per-method receive limits',
  'svc patch: a malformed header is the client',
  'svc patch: a message that does not decompress is the client',
  'svc patch: a request that does not decode is the client',
];

describe('the patched @grpc/grpc-js', () => {
  it('is the version the patch was written for', () => {
    const pinned = /'@grpc\/grpc-js@([0-9.]+)': patches\/@grpc__grpc-js@([0-9.]+)\.patch/.exec(workspace);
    expect(pinned, 'pnpm-workspace.yaml patchedDependencies names the grpc-js patch').not.toBeNull();
    const installed = JSON.parse(readFileSync(join(grpcDir, 'package.json'), 'utf8')).version;
    expect(installed, 'grpc-js changed version: carry patches/@grpc__grpc-js@*.patch over (docs/agent-gateway.md)').toBe(pinned?.[1]);
    expect(pinned?.[2]).toBe(pinned?.[1]);
  });

  it('carries each of the five changes in what is installed, and the patch file holds no others', () => {
    const installed = readFileSync(join(grpcDir, 'build/src/server-interceptors.js'), 'utf8');
    for (const change of PATCHED) expect(installed, change).toContain(change);
    const patch = readFileSync(join(root, 'patches/@grpc__grpc-js@1.14.3.patch'), 'utf8');
    expect(patch.match(/svc patch: [^.(]+/g)?.length).toBe(PATCHED.length);
  });
});
