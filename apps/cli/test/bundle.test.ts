import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { connect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The `svc` image's command (infra/Dockerfile target svc): the cli's precompiled bundle
// (infra/bundle-app.mjs, `build` of @svc/cli) run by plain node, no tsx, its externals resolved
// from the app's own node_modules as they are in the image (`pnpm deploy --prod`): the native
// argon2 addon (`svc admin create` hashes the password, the login verifies it), PGlite's wasm and
// data files and its worker thread file beside the bundle (the embedded database), grpc-js (the
// gateway's TLS port). Built into a directory of its own inside the app, on an embedded database
// whatever the test run's DATABASE_URL: the bundle is what is under test, not the store, so it
// runs once per CI run (the PGlite pass; skipped when DATABASE_URL is set): ~10-20 s.
const onPostgresPass = Boolean(process.env.DATABASE_URL);

const APP = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = `dist/.test-${process.pid}`;
const EMAIL = 'owner@example.com';
const PASSWORD = 'bundle-password-1';
let dataDir: string;
let child: ChildProcess | undefined;
let url: string;
let grpcPort: number;
const log: string[] = [];

const env = () => ({
  PATH: process.env.PATH ?? '',
  SVC_DATA_DIR: dataDir,
  SVC_INSTALLATION_KEY: key,
  SVC_HTTP_HOST: '127.0.0.1',
  SVC_HTTP_PORT: '0',
  SVC_GRPC_HOST: '127.0.0.1',
  SVC_GRPC_PORT: '0',
  SVC_LOG_LEVEL: 'info',
});
const key = randomBytes(32).toString('base64');

beforeAll(async () => {
  if (onPostgresPass) return;
  execFileSync(process.execPath, [resolve(APP, '../../infra/bundle-app.mjs'), 'src/main.ts', OUT], { cwd: APP, stdio: 'pipe' });
  dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-bundle-'));
  const main = join(APP, OUT, 'main.js');
  execFileSync(process.execPath, [main, 'admin', 'create', '--email', EMAIL, '--role', 'owner', '--password-stdin'], {
    cwd: tmpdir(),
    env: env(),
    input: `${PASSWORD}\n`,
    stdio: 'pipe',
  });
  child = spawn(process.execPath, [main, 'start'], { cwd: tmpdir(), env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr?.on('data', (b: Buffer) => log.push(b.toString()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  [url, grpcPort] = await new Promise<[string, number]>((ok, fail) => {
    let http: string | undefined;
    let grpc: number | undefined;
    child?.once('exit', (code) => fail(new Error(`svc start (bundle) exited (${code}):\n${log.join('\n')}`)));
    lines.on('line', (l) => {
      log.push(l);
      const line = JSON.parse(l) as { url?: string; grpc_port?: number; msg?: string };
      if (line.grpc_port) grpc = line.grpc_port;
      if (line.url && line.msg?.startsWith('listening on')) http = line.url;
      if (http && grpc) ok([http, grpc]);
    });
  });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(join(APP, OUT), { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(onPostgresPass)('the svc bundle (node dist/main.js, no tsx)', () => {
  it('creates an admin, starts every surface on an embedded database, and signs that admin in', async () => {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const login = await fetch(`${url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as { access_token: string };
    const me = await fetch(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(((await me.json()) as { email: string }).email).toBe(EMAIL);
  });

  it('sends a person who opens the root to the admin panel, which the bundle serves from the workspace build', async () => {
    const res = await fetch(`${url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/admin/');
    const page = await fetch(`${url}/admin/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = html.match(/<script type="module"[^>]* src="\.\/(assets\/[^"]+\.js)"/)?.[1];
    expect(script, html).toBeTruthy();
    expect((await fetch(`${url}/admin/${script}`)).status).toBe(200);
  });

  it('serves the API docs pages and their Swagger UI files from the app’s own node_modules', async () => {
    for (const base of ['/api/v1/docs', '/portal/v1/docs']) {
      expect((await fetch(`${url}${base}`)).status, base).toBe(200);
      const css = await fetch(`${url}${base}/assets/swagger-ui.css`);
      expect(css.status, `${base}/assets/swagger-ui.css`).toBe(200);
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect((await css.text()).length).toBeGreaterThan(1000);
      expect((await fetch(`${url}${base}/assets/swagger-ui-bundle.js`)).status).toBe(200);
    }
  });

  it('answers an unknown subscription link with 404 problem+json', async () => {
    const res = await fetch(`${url}/sub/not-a-token`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it("completes a TLS handshake on the agent gateway's port", async () => {
    const protocol = await new Promise<string | false | null>((ok, fail) => {
      const s = connect({ host: '127.0.0.1', port: grpcPort, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      s.once('secureConnect', () => {
        ok(s.alpnProtocol);
        s.end();
      });
      s.once('error', fail);
    });
    expect(protocol).toBe('h2');
  });
});
