import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@svc/config';
import { startTestServer, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgentFiles } from '../src/agent-files.ts';

/**
 * The one-file agent served to nodes (issue 31 item 2): GET /agent/latest names the version,
 * file, SHA-256 and URL; GET /agent/{version}/{file} and its .sha256 serve exactly that release;
 * a file whose checksum file disagrees is not served at all; nothing else under /agent/.
 */
const BODY = `#!/usr/bin/env node\nconsole.log(${JSON.stringify('agent '.repeat(200))});\n`;
const SUM = createHash('sha256').update(BODY).digest('hex');
const dirs: string[] = [];

function release(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-dist-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const start = (env: Record<string, string>) =>
  startTestServer({ env, mount: (root) => registerAgentFiles(root as never, loadConfig(env)) });

let s: TestServer;
beforeAll(async () => {
  const dir = release({ 'svc-agent-1.2.3.mjs': BODY, 'svc-agent-1.2.3.mjs.sha256': `${SUM}  svc-agent-1.2.3.mjs\n` });
  s = await start({ SVC_AGENT_DIST_DIR: dir, SVC_PUBLIC_BASE_URL: 'https://cp.example.com/k3y' });
});
afterAll(async () => {
  await s?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('GET /agent/…', () => {
  it('latest names the release with its SHA-256 and its URL under the public prefix', async () => {
    const res = await s.api.get('/agent/latest');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ version: '1.2.3', file: 'svc-agent-1.2.3.mjs', sha256: SUM, url: '/k3y/agent/1.2.3/svc-agent-1.2.3.mjs' });
    expect(res.headers.get('cache-control')).toBe('no-cache');
  });

  it('serves the file and its checksum in sha256sum format, immutable', async () => {
    const file = await fetch(`${s.url}/agent/1.2.3/svc-agent-1.2.3.mjs`);
    expect(file.status).toBe(200);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(SUM);
    expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(file.headers.get('x-checksum-sha256')).toBe(SUM);
    const sum = await fetch(`${s.url}/agent/1.2.3/svc-agent-1.2.3.mjs.sha256`);
    expect(await sum.text()).toBe(`${SUM}  svc-agent-1.2.3.mjs\n`);
  });

  it('answers 404 for another version, another name, or a path that climbs out', async () => {
    for (const path of [
      '/agent/1.2.4/svc-agent-1.2.4.mjs',
      '/agent/1.2.3/svc-agent-1.2.4.mjs',
      '/agent/1.2.3/..%2F..%2Fetc%2Fpasswd',
      '/agent/1.2.3/meta.json',
      '/agent/..%2F1.2.3/svc-agent-1.2.3.mjs',
    ]) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/problem+json');
    }
  });

  it('a file its checksum file disagrees with, or none at all, is not served: 503 saying what to do', async () => {
    const tampered = release({
      'svc-agent-1.2.3.mjs': `${BODY}// changed\n`,
      'svc-agent-1.2.3.mjs.sha256': `${SUM}  svc-agent-1.2.3.mjs\n`,
    });
    const empty = release({});
    for (const dir of [tampered, empty]) {
      const other = await start({ SVC_AGENT_DIST_DIR: dir });
      try {
        const latest = await other.api.get('/agent/latest');
        expect(latest.status).toBe(503);
        expect(latest.body.detail).toMatch(/pnpm build|SVC_AGENT_DIST_DIR/);
        expect((await fetch(`${other.url}/agent/1.2.3/svc-agent-1.2.3.mjs`)).status).toBe(503);
      } finally {
        await other.stop();
      }
    }
  });
});
