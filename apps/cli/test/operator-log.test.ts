import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppProcess,
  appEntry,
  createTestDatabase,
  migratedDataDir,
  operatorEnv,
  REPO_ROOT,
  spawnApp,
  testDatabaseUrl,
} from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * What `svc` tells an operator on stdout (docs/observability.md, "Logs"), from a real process:
 * where it listens and where to open it, that the setup is done, and that it stopped, with
 * exit 0 on a clean stop whichever of SIGINT (Ctrl-C) and SIGTERM asked for it.
 */
const MAIN = 'apps/cli/src/main.ts';
const OWNER = { email: 'owner@example.com', password: 'a long owner password' };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function installation(): Promise<Record<string, string>> {
  const database = testDatabaseUrl() ? await createTestDatabase() : undefined;
  const dir = database ? mkdtempSync(join(tmpdir(), 'svc-oplog-')) : await migratedDataDir('svc-oplog-');
  cleanups.push(async () => {
    await database?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    SVC_DATA_DIR: dir,
    SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
    SVC_LOG_LEVEL: 'info',
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
  };
}

const parsed = (p: AppProcess) =>
  p.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, any>];
    } catch {
      return [];
    }
  });

describe('svc start in its log', () => {
  it('names the address it is bound to and the URL to open, logs the setup when it completes, and one Ctrl-C through pnpm stops it: "stopped", exit 0', async () => {
    const env = await installation();
    const svc = spawnApp(MAIN, { ...env, SVC_HTTP_HOST: '0.0.0.0', SVC_HTTP_PORT: '0', SVC_GRPC_HOST: '127.0.0.1', SVC_GRPC_PORT: '0' }, [
      'start',
    ]);
    cleanups.push(() => svc.kill());
    const listening = await svc.waitForLog(/^listening on /, 90_000);
    const port = Number(/:(\d+)$/.exec(listening.address)?.[1]);
    expect(listening.address).toBe(`0.0.0.0:${port}`);
    expect(listening.url).toBe(`http://localhost:${port}`);
    expect(listening.msg).toBe(`listening on 0.0.0.0:${port} (every IPv4 address of this machine); open http://localhost:${port}`);
    const gateway = parsed(svc).find((l) => /^agent gateway listening/.test(l.msg));
    expect(gateway?.addresses).toEqual([`127.0.0.1:${gateway?.grpc_port}`]);

    const bootstrap = await svc.waitForLog(/^bootstrap mode/);
    expect(bootstrap.setup_url).toBe(`http://localhost:${port}/api/v1/setup`);
    const setup = await fetch(`http://127.0.0.1:${port}/api/v1/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: bootstrap.setup_token, ...OWNER }),
    });
    expect(setup.status).toBe(201);
    const admin = (await setup.json()) as { id: string };
    const completed = await svc.waitForLog(/^setup completed/);
    expect(completed).toMatchObject({ level: 30, admin_id: admin.id, email: OWNER.email, role: 'owner', via: 'api', ip: '127.0.0.1' });
    expect(JSON.stringify(completed)).not.toContain(OWNER.password);
    expect(JSON.stringify(completed)).not.toContain(bootstrap.setup_token);

    // What one Ctrl-C becomes under `pnpm start`: the terminal's SIGINT, pnpm's forwarded one,
    // and a SIGTERM from a pnpm that got two (npm forwards too under `npx pnpm`).
    svc.child.kill('SIGINT');
    // pnpm's copies come a moment later (the kernel would merge a second SIGINT still pending).
    await new Promise((r) => setTimeout(r, 100));
    svc.child.kill('SIGINT');
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
    const ends = parsed(svc).slice(-2);
    expect(ends.map((l) => [l.msg, l.signal])).toEqual([
      ['stopping', 'SIGINT'],
      ['stopped', 'SIGINT'],
    ]);
    expect(svc.stderr()).toBe('');
  }, 120_000);

  it('svc admin create of the first admin logs "setup completed" (via cli); a second admin logs none', async () => {
    const env = await installation();
    const create = (email: string, role: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [...appEntry(MAIN).argv, 'admin', 'create', '--email', email, '--role', role, '--password-stdin'],
          {
            cwd: REPO_ROOT,
            env: operatorEnv(env),
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (s: string) => {
          out += s;
        });
        child.stderr.setEncoding('utf8').on('data', (s: string) => {
          out += s;
        });
        child.stdin.end(`${OWNER.password}\n`);
        child.once('close', (code) => resolve({ code, out }));
      });
    const completedIn = (out: string) => out.split('\n').filter((l) => l.includes('"msg":"setup completed'));
    const first = await create(OWNER.email, 'owner');
    expect(first.code, first.out).toBe(0);
    const [line] = completedIn(first.out);
    expect(JSON.parse(line as string)).toMatchObject({
      email: OWNER.email,
      role: 'owner',
      via: 'cli',
      admin_id: expect.stringMatching(/^adm_/),
    });
    expect(first.out).not.toContain(OWNER.password);
    const second = await create('second@example.com', 'viewer');
    expect(second.code, second.out).toBe(0);
    expect(completedIn(second.out)).toEqual([]);
  }, 120_000);
});
