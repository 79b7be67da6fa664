import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acme from 'acme-client';
import { describe, expect, it } from 'vitest';

// A reach into acme-client (docs/dependency-seams.md): its one process-wide axios instance gets a
// request interceptor that sends a session's requests through our outbound client, and its own
// retries are turned off through `defaults.acmeSettings` (packages/providers/src/acme/acme-protocol.ts).
// An upgrade that changes either fails here by name; the pebble suites then prove the routing.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
const require = createRequire(join(root, 'packages/providers/package.json'));

describe('the reach into acme-client', () => {
  it('is against the version it was written for', () => {
    const pinned = /^ {2}acme-client: ([0-9.]+)$/m.exec(workspace)?.[1];
    let dir = dirname(require.resolve('acme-client'));
    while (!dir.endsWith('acme-client')) dir = dirname(dir);
    const installed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    expect(installed, 'acme-client changed version: check acme-protocol.ts routeThroughOutbound (docs/dependency-seams.md)').toBe(pinned);
  });

  it('exposes its axios instance with request interceptors, the adapter per request, and its retry settings', () => {
    expect(typeof acme.axios.interceptors.request.use).toBe('function');
    expect(typeof acme.axios.interceptors.request.eject).toBe('function');
    expect(typeof acme.axios.getUri).toBe('function');
    const settings = (acme.axios.defaults as unknown as { acmeSettings?: { retryMaxAttempts?: unknown } }).acmeSettings;
    expect(typeof settings?.retryMaxAttempts).toBe('number');
  });
});
