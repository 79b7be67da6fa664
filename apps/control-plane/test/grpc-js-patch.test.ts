import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The gateway and the agent depend on seven changes to @grpc/grpc-js (patches/,
// docs/agent-gateway.md "Why a patch"): response compression, per-method receive limits, three
// client errors that were INTERNAL or a crash, compressed responses compressed without a framing
// copy first (server-interceptors.js), and messages decompressed in large chunks
// (compression-filter.js, the agent's side). This test fails loudly when the installed grpc-js is not the version the
// patch was written for, or when any of the seven is missing from what is installed: an upgrade
// must carry each one over (or prove upstream has it) before anything else runs.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
const require = createRequire(join(root, 'apps/control-plane/package.json'));
const grpcDir = dirname(require.resolve('@grpc/grpc-js/package.json'));

/** Each change, by the file it is in. */
const PATCHED: Record<string, string[]> = {
  'build/src/server-interceptors.js': [
    'svc patch: response compression',
    'svc patch: per-method receive limits',
    'svc patch: a malformed header is the client',
    'svc patch: a message that does not decompress is the client',
    'svc patch: a request that does not decode is the client',
    'svc patch: a compressed response is compressed from the serialized message',
  ],
  'build/src/compression-filter.js': ['svc patch: decompressed in large chunks'],
};

describe('the patched @grpc/grpc-js', () => {
  it('is the version the patch was written for', () => {
    const pinned = /'@grpc\/grpc-js@([0-9.]+)': patches\/@grpc__grpc-js@([0-9.]+)\.patch/.exec(workspace);
    expect(pinned, 'pnpm-workspace.yaml patchedDependencies names the grpc-js patch').not.toBeNull();
    const installed = JSON.parse(readFileSync(join(grpcDir, 'package.json'), 'utf8')).version;
    expect(installed, 'grpc-js changed version: carry patches/@grpc__grpc-js@*.patch over (docs/agent-gateway.md)').toBe(pinned?.[1]);
    expect(pinned?.[2]).toBe(pinned?.[1]);
  });

  it('carries each of the seven changes in what is installed, and the patch file holds no others', () => {
    for (const [file, changes] of Object.entries(PATCHED)) {
      const installed = readFileSync(join(grpcDir, file), 'utf8');
      for (const change of changes) expect(installed, `${file}: ${change}`).toContain(change);
    }
    const patch = readFileSync(join(root, 'patches/@grpc__grpc-js@1.14.3.patch'), 'utf8');
    const named = new Set(patch.match(/svc patch: [^.(:]+/g));
    const known = Object.values(PATCHED).flat();
    for (const change of named)
      expect(
        known.some((k) => k.startsWith(change) || change.startsWith(k)),
        `unlisted change: ${change}`,
      ).toBe(true);
    expect(new Set(patch.match(/^\+\+\+ b\/(.+)$/gm)?.map((l) => l.slice(6)))).toEqual(new Set(Object.keys(PATCHED)));
  });
});
