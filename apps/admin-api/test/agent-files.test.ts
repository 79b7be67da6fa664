import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@svc/config';
import { peerMissing, startTestServer, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentReleaseOffer, registerAgentFiles } from '../src/agent-files.ts';

/** shellcheck lints the installer as POSIX sh; missing, that test skips (with CI=true: an error). */
const SHELLCHECK = spawnSync('sh', ['-c', 'command -v shellcheck']).status === 0;
if (!SHELLCHECK) peerMissing('shellcheck', 'not on PATH; apt-get install shellcheck');

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
let distDir: string;
const ENV = () => ({
  SVC_AGENT_DIST_DIR: distDir,
  SVC_PUBLIC_BASE_URL: 'https://cp.example.com/k3y',
  SVC_GRPC_PUBLIC_ENDPOINT: 'gw.example.com:8443',
});
beforeAll(async () => {
  distDir = release({ 'svc-agent-1.2.3.mjs': BODY, 'svc-agent-1.2.3.mjs.sha256': `${SUM}  svc-agent-1.2.3.mjs\n` });
  s = await start(ENV());
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

describe('GET /agent/install.sh', () => {
  it('is the installer with this control plane’s address, gateway and release filled in, each one shell word', async () => {
    const res = await fetch(`${s.url}/agent/install.sh`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/x-shellscript');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const text = await res.text();
    expect(text.startsWith('#!/bin/sh\n')).toBe(true);
    expect(text).toMatch(/^set -eu$/m);
    expect(text).toContain("BASE_URL='https://cp.example.com/k3y'\n");
    expect(text).toContain("AGENT_VERSION='1.2.3'\n");
    expect(text).toContain("AGENT_FILE='svc-agent-1.2.3.mjs'\n");
    expect(text).toContain(`AGENT_SHA256='${SUM}'\n`);
    expect(text).toContain("GRPC_ENDPOINT='gw.example.com:8443'\n");
    expect(text).not.toMatch(/@@[A-Z_]+@@/);
    // POSIX sh reads it (dash, Debian's /bin/sh), and --help runs before anything else.
    expect(spawnSync('dash', ['-n'], { input: text }).status).toBe(0);
    const help = spawnSync('sh', ['-s', '--', '--help'], { input: text });
    expect(help.status).toBe(0);
    expect(help.stdout.toString()).toContain('--engine-bin PATH');
    expect(help.stdout.toString()).toContain('(default: gw.example.com:8443)');
  });

  it('a value with a quote in it stays one word (the operator’s base URL is theirs, the script is run as root)', async () => {
    const env = { ...ENV(), SVC_PUBLIC_BASE_URL: "https://cp.example.com/it's" };
    const other = await start(env);
    try {
      const text = await (await fetch(`${other.url}/agent/install.sh`)).text();
      const printed = spawnSync('sh', ['-c', `${text.split('\n').find((l) => l.startsWith('BASE_URL='))}; printf '%s' "$BASE_URL"`]);
      expect(printed.stdout.toString()).toBe("https://cp.example.com/it's");
    } finally {
      await other.stop();
    }
  });

  it.skipIf(!SHELLCHECK)('passes shellcheck as POSIX sh', () => {
    const out = spawnSync('shellcheck', ['-s', 'sh', new URL('../src/agent-install.sh', import.meta.url).pathname]);
    expect(out.stdout.toString(), out.stdout.toString()).toBe('');
    expect(out.status).toBe(0);
  });

  it('pins the same Xray archives as the agent image (one pin, two places: infra/agent/Dockerfile and the script)', () => {
    const script = readFileSync(new URL('../src/agent-install.sh', import.meta.url), 'utf8');
    const dockerfile = readFileSync(new URL('../../../infra/agent/Dockerfile', import.meta.url), 'utf8');
    const pin = (re: RegExp, text: string) => re.exec(text)?.[1];
    expect(pin(/^XRAY_VERSION=(\S+)$/m, script)).toBe(pin(/^ARG XRAY_VERSION=(\S+)$/m, dockerfile));
    expect(pin(/^XRAY_SHA256_X64=(\S+)$/m, script)).toBe(pin(/^ARG XRAY_SHA256=(\S+)$/m, dockerfile));
    expect(pin(/^XRAY_SHA256_ARM64=([0-9a-f]{64})$/m, script)).toBeDefined();
  });

  it('503 (curl -f then feeds sh nothing) when there is no release to name', async () => {
    const other = await start({ SVC_AGENT_DIST_DIR: release({}) });
    try {
      const res = await fetch(`${other.url}/agent/install.sh`);
      expect(res.status).toBe(503);
      // (Asynchronously: the server answering curl runs in this process.)
      const { stdout } = await promisify(execFile)('sh', ['-c', `curl -fsSL ${other.url}/agent/install.sh | sh; echo "sh: $?"`]);
      expect(stdout).toBe('sh: 0\n');
    } finally {
      await other.stop();
    }
  });
});

describe('the release served follows its directory', () => {
  it('a new build in the directory is served, and offered for upgrades, without a restart', async () => {
    const body = `${BODY}// 1.2.4\n`;
    const sum = createHash('sha256').update(body).digest('hex');
    const next = release({ 'svc-agent-1.2.4.mjs': body, 'svc-agent-1.2.4.mjs.sha256': `${sum}  svc-agent-1.2.4.mjs\n` });
    const env = ENV();
    const dir = env.SVC_AGENT_DIST_DIR;
    const other = await start({ ...env, SVC_AGENT_DIST_DIR: `${dir}-live` });
    try {
      renameSync(dir, `${dir}-live`);
      expect((await other.api.get('/agent/latest')).body.version).toBe('1.2.3');
      // A build swaps its output directory whole (infra/bundle-app.mjs).
      renameSync(`${dir}-live`, `${dir}-old`);
      renameSync(next, `${dir}-live`);
      expect((await other.api.get('/agent/latest')).body).toMatchObject({ version: '1.2.4', sha256: sum });
      expect(agentReleaseOffer(loadConfig({ ...env, SVC_AGENT_DIST_DIR: `${dir}-live` }))).toEqual({
        version: '1.2.4',
        sha256: sum,
        url: 'https://cp.example.com/k3y/agent/1.2.4/svc-agent-1.2.4.mjs',
      });
    } finally {
      await other.stop();
      renameSync(`${dir}-old`, dir);
      dirs.push(`${dir}-live`);
    }
  });
});
