import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { niceGrpcInternals } from '../src/grpc-server.ts';

// A reach into nice-grpc's internals (docs/dependency-seams.md): the gateway builds its grpc-js
// service definition from nice-grpc's own normalizer and method handlers, loaded by module path
// (grpc-server.ts), to hand serialized messages on without nice-grpc's Buffer copy. An upgrade
// that moves or renames them fails here, by name, before any gRPC test times out.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
const require = createRequire(join(root, 'apps/control-plane/package.json'));

describe('the reach into nice-grpc', () => {
  it('is against the version it was written for', () => {
    const pinned = /^ {2}nice-grpc: ([0-9.]+)$/m.exec(workspace)?.[1];
    const installed = JSON.parse(readFileSync(join(dirname(require.resolve('nice-grpc')), '../package.json'), 'utf8')).version;
    expect(installed, 'nice-grpc changed version: check grpc-server.ts niceGrpcInternals (docs/dependency-seams.md)').toBe(pinned);
  });

  it('finds the normalizer and the four method handlers where it loads them, as functions', () => {
    const nice = niceGrpcInternals();
    for (const name of ['normalizeServiceDefinition', 'unary', 'serverStreaming', 'clientStreaming', 'bidi'] as const)
      expect(typeof nice[name], name).toBe('function');
  });
});
