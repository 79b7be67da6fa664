import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mountAdminApi } from '@svc/admin-api';
import { TOPICS } from '@svc/domain';
import {
  appEntry,
  createApiClient,
  createTestDatabase,
  migratedDataDir,
  startTestServer,
  type TestDatabase,
  type TestServer,
  testDatabaseUrl,
} from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The `svc` command as an operator runs it (spec 5.5): a real child process working on the
 * data store directly. PGlite mode: the child opens SVC_DATA_DIR's embedded database, so
 * it must have exited before anything else opens that directory. PostgreSQL mode
 * (DATABASE_URL set): every test gets its own migrated schema and hands its URL down.
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const MAIN = 'apps/cli/src/main.ts';
const BIN = 'apps/cli/bin/svc.mjs';
const pgMode = Boolean(testDatabaseUrl());
const CHILD_TIMEOUT_MS = 45_000;
const TEST_TIMEOUT_MS = 120_000;

const EMAIL = 'a@example.com';
const PASSWORD = 'first-password-1';
const NEW_PASSWORD = 'second-password-2';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Svc {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
  exited: Promise<Exit>;
  /** The first stdout line matching `pred` (already written or still to come). */
  waitForLine(pred: (line: string) => boolean, what: string): Promise<string>;
}

const running = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const child of running) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  running.clear();
  while (cleanups.length) await cleanups.pop()?.();
});

/** Environment the operator would set; nothing of the test runner's SVC_* leaks in. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SVC_') || k === 'DATABASE_URL' || k === 'REDIS_URL' || k.startsWith('VITEST') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** `svc ...` (the cli's fresh bundle, or its source under tsx: appEntry), or with `bin`, the installed `svc` entry. */
function spawnSvc(args: string[], env: Record<string, string>, stdin?: string, opts: { bin?: boolean } = {}): Svc {
  const argv = opts.bin ? [BIN, ...args] : [...appEntry(MAIN).argv, ...args];
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: string[] = [];
  const waiters: Array<{ pred: (l: string) => boolean; resolve: (l: string) => void }> = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  rl.on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.pred(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const stdoutDone = new Promise<void>((r) => rl.once('close', () => r()));
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
  const exited = new Promise<Exit>((resolveExit) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      // stdout may still hold buffered lines when 'exit' fires.
      void stdoutDone.then(() => resolveExit({ code, signal, stdout: lines.join('\n'), stderr }));
    });
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  else child.stdin?.end();

  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLine(pred, what) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise<string>((resolveLine, reject) => {
        waiters.push({ pred, resolve: resolveLine });
        void exited.then((e) =>
          reject(new Error(`svc exited (code ${e.code}, signal ${e.signal}) before ${what}\nstdout:\n${e.stdout}\nstderr:\n${e.stderr}`)),
        );
      });
    },
  };
}

/** Runs `svc ...` to completion (killed after CHILD_TIMEOUT_MS). */
const run = (args: string[], env: Record<string, string>, stdin?: string) => spawnSvc(args, env, stdin).exited;

const describeExit = (e: Exit) => `exit ${e.code} (signal ${e.signal})\nstdout:\n${e.stdout}\nstderr:\n${e.stderr}`;

interface Installation {
  dir: string;
  key: string;
  /** The test's own schema (PostgreSQL mode). */
  database?: TestDatabase;
  /** What `svc` is started with. */
  env: Record<string, string>;
}

/** An installation's folder: on the embedded default its database already migrated (migratedDataDir); a truly fresh one is 'svc migrate on a fresh embedded database'. */
async function newInstallation(): Promise<Installation> {
  const dir = pgMode ? mkdtempSync(join(tmpdir(), 'svc-cli-')) : await migratedDataDir('svc-cli-');
  const key = randomBytes(32).toString('base64');
  const database = pgMode ? await createTestDatabase() : undefined;
  cleanups.push(async () => {
    await database?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const env: Record<string, string> = { SVC_DATA_DIR: dir, SVC_INSTALLATION_KEY: key, SVC_LOG_LEVEL: 'info' };
  if (database?.url) env.DATABASE_URL = database.url;
  return { dir, key, database, env };
}

/** The admin surface in this process, on the database the CLI wrote to. */
async function serverOn(inst: Installation, opts: { redisKeyPrefix?: string } = {}): Promise<TestServer> {
  const server = await startTestServer({
    ...opts,
    useConfiguredDatabase: true,
    env: {
      SVC_DATA_DIR: inst.dir,
      SVC_INSTALLATION_KEY: inst.key,
      ...(inst.env.DATABASE_URL ? { DATABASE_URL: inst.env.DATABASE_URL } : {}),
    },
    mount: mountAdminApi,
  });
  let stopped = false;
  const stop = server.stop.bind(server);
  server.stop = async (o) => {
    if (stopped) return;
    stopped = true;
    await stop(o);
  };
  cleanups.push(() => server.stop());
  return server;
}

async function createAdmin(inst: Installation, email = EMAIL, password = PASSWORD, role = 'owner'): Promise<Exit> {
  return run(['admin', 'create', '--email', email, '--role', role, '--password-stdin'], inst.env, `${password}\n`);
}

describe('svc admin create (spec 5.5: the first admin without a browser)', () => {
  it(
    'creates an owner from a password on stdin; the server then signs them in and leaves bootstrap mode',
    async () => {
      const inst = await newInstallation();
      const created = await createAdmin(inst);
      expect(created.code, describeExit(created)).toBe(0);
      expect(created.stdout).toMatch(/created owner a@example\.com \(adm_[0-9a-z]+\)/);

      const server = await serverOn(inst);
      expect(server.setupToken).toBeNull();
      const methods = await server.api.get('/api/v1/auth/methods');
      expect(methods.status).toBe(200);
      expect(methods.body).toMatchObject({ password: true, setup_required: false });
      const login = await server.api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD });
      expect(login.status, login.text).toBe(200);
      const me = await server.api.get('/api/v1/auth/me', { token: login.body.access_token });
      expect(me.status, me.text).toBe(200);
      expect(JSON.stringify(me.body)).toContain('"owner"');

      // The CLI is an actor like any other: its change is in the audit log, as the system.
      const audit = await server.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'admin.created').execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor_type: 'system', actor_id: null, entity_type: 'admin' });
      // The setup endpoint is gone once an admin exists.
      expect((await server.api.post('/api/v1/setup', { token: 'x', email: 'b@example.com', password: PASSWORD })).status).toBe(404);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an existing email exits non-zero with a message and creates nothing',
    async () => {
      const inst = await newInstallation();
      expect((await createAdmin(inst)).code).toBe(0);
      const again = await createAdmin(inst, EMAIL, 'other-password-9', 'admin');
      expect(again.code, describeExit(again)).not.toBe(0);
      expect(again.stderr).toContain('an admin with this email exists');
      expect(again.stderr).toMatch(/email: already taken/);

      const server = await serverOn(inst);
      expect(await server.deps.db.selectFrom('admins').select(['email', 'role']).execute()).toEqual([{ email: EMAIL, role: 'owner' }]);
      expect((await server.api.post('/api/v1/auth/login', { email: EMAIL, password: 'other-password-9' })).status).toBe(401);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unknown --role exits non-zero with the usage and touches no database',
    async () => {
      const inst = await newInstallation();
      const res = await createAdmin(inst, EMAIL, PASSWORD, 'god');
      expect(res.code, describeExit(res)).not.toBe(0);
      expect(res.stderr).toContain('--role must be owner, admin or viewer, not "god"');
      expect(res.stderr).toContain('usage: svc');
      expect(res.stderr).toContain('svc admin create --email E --role R');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a password below the policy (8 characters) is refused and nothing is created',
    async () => {
      const inst = await newInstallation();
      const res = await createAdmin(inst, EMAIL, 'short');
      expect(res.code, describeExit(res)).not.toBe(0);
      expect(res.stderr).toMatch(/at least 8 characters/);
      const server = await serverOn(inst);
      expect((await server.api.get('/api/v1/auth/methods')).body.setup_required).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an email the admin API would refuse is refused by the same rule, naming --email, before the data store is opened',
    async () => {
      const inst = await newInstallation();
      // A one-letter top-level domain: the API's email rule refuses it, so the shell must too.
      const res = await createAdmin(inst, 'ops@example.c');
      expect(res.code, describeExit(res)).not.toBe(0);
      expect(res.stderr).toContain('the admin was not created');
      expect(res.stderr).toMatch(/--email: must be an email address/);
      const server = await serverOn(inst);
      expect((await server.api.get('/api/v1/auth/methods')).body.setup_required).toBe(true);
      const api = await server.api.post('/api/v1/setup', { token: server.setupToken, email: 'ops@example.c', password: PASSWORD });
      expect(api.status).toBe(400);
      expect(Object.keys(api.body.errors)).toEqual(['email']);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('svc admin reset-password (spec 5.5: recovery when the only owner lost access)', () => {
  it(
    'sets the new password (old one 401, new one 200); sessions issued before can no longer refresh, nor their access tokens be used',
    async () => {
      const inst = await newInstallation();
      expect((await createAdmin(inst)).code).toBe(0);

      let server = await serverOn(inst);
      const before = await server.api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD });
      expect(before.status, before.text).toBe(200);
      const oldRefresh: string = before.body.refresh_token;
      // The embedded database is one process's at a time.
      await server.stop();

      const reset = await run(['admin', 'reset-password', '--email', EMAIL, '--password-stdin'], inst.env, `${NEW_PASSWORD}\n`);
      expect(reset.code, describeExit(reset)).toBe(0);
      expect(reset.stdout).toContain('password of a@example.com changed');

      server = await serverOn(inst);
      // The access token signed before the reset has not expired, and is refused (issue 12.7).
      expect((await server.api.get('/api/v1/auth/me', { token: before.body.access_token })).status).toBe(401);
      expect((await server.api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(401);
      const refreshed = await server.api.post('/api/v1/auth/refresh', { refresh_token: oldRefresh });
      expect(refreshed.status, refreshed.text).toBe(401);
      const after = await server.api.post('/api/v1/auth/login', { email: EMAIL, password: NEW_PASSWORD });
      expect(after.status, after.text).toBe(200);
      // A session opened after the reset refreshes normally.
      expect((await server.api.post('/api/v1/auth/refresh', { refresh_token: after.body.refresh_token })).status).toBe(200);

      const audit = await server.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'admin.password_reset').execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor_type: 'system', entity_type: 'admin' });
      const sessions = await server.deps.db.selectFrom('sessions').select(['revoked_reason']).orderBy('created_at').execute();
      expect(sessions[0]?.revoked_reason).toBe('password_reset');
    },
    TEST_TIMEOUT_MS,
  );

  it.skipIf(!pgMode || !process.env.REDIS_URL)(
    'split mode: a reset from the shell while the server runs ends the access tokens signed before at once (admins.changed over Redis)',
    async () => {
      const inst = await newInstallation();
      expect((await createAdmin(inst)).code).toBe(0);
      const redisKeyPrefix = `svc-test:${randomBytes(6).toString('hex')}:`;
      const server = await serverOn(inst, { redisKeyPrefix });
      const before = await server.api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD });
      expect(before.status, before.text).toBe(200);
      expect((await server.api.get('/api/v1/auth/me', { token: before.body.access_token })).status).toBe(200); // held by the cache
      let done!: () => void;
      const heard = new Promise<void>((resolve) => {
        done = resolve;
      });
      const unsubscribe = await server.deps.bus.subscribe(TOPICS.adminsChanged, () => done());
      cleanups.push(unsubscribe);
      const env = { ...inst.env, REDIS_URL: process.env.REDIS_URL as string, SVC_REDIS_KEY_PREFIX: redisKeyPrefix };
      const reset = await run(['admin', 'reset-password', '--email', EMAIL, '--password-stdin'], env, `${NEW_PASSWORD}\n`);
      expect(reset.code, describeExit(reset)).toBe(0);
      await heard;
      // The server's clock has not moved: only the message can have ended the token.
      expect((await server.api.get('/api/v1/auth/me', { token: before.body.access_token })).status).toBe(401);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unknown email exits non-zero and changes nothing',
    async () => {
      const inst = await newInstallation();
      expect((await createAdmin(inst)).code).toBe(0);
      const res = await run(
        ['admin', 'reset-password', '--email', 'nobody@example.com', '--password-stdin'],
        inst.env,
        `${NEW_PASSWORD}\n`,
      );
      expect(res.code, describeExit(res)).not.toBe(0);
      expect(res.stderr).toContain('nobody@example.com not found');
      const server = await serverOn(inst);
      expect((await server.api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(200);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('svc migrate', () => {
  it(
    'on a fresh embedded database applies the migrations, then reports it is up to date',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const env = { SVC_DATA_DIR: dir, SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'), SVC_LOG_LEVEL: 'info' };
      const first = await run(['migrate'], env);
      expect(first.code, describeExit(first)).toBe(0);
      expect(first.stdout).toMatch(/^applied: .*foundation/m);
      const second = await run(['migrate'], env);
      expect(second.code, describeExit(second)).toBe(0);
      expect(second.stdout).toContain('database is up to date');
    },
    TEST_TIMEOUT_MS,
  );

  // A suite against the PostgreSQL server exists only when there is one (DATABASE_URL).
  const postgresCases = pgMode ? ['an empty PostgreSQL schema (DATABASE_URL)'] : [];
  it.each(postgresCases)(
    'on %s applies the migrations, then reports it is up to date',
    async () => {
      // A schema of its own with nothing in it, next to this test's migrated one.
      const { database } = await newInstallation();
      const db = (database as TestDatabase).db;
      const schema = `t_${randomBytes(6).toString('hex')}`;
      await db.schema.createSchema(schema).execute();
      cleanups.push(async () => {
        await db.schema.dropSchema(schema).ifExists().cascade().execute();
      });
      const url = new URL(testDatabaseUrl() as string);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const env = { SVC_DATA_DIR: dir, DATABASE_URL: url.toString(), SVC_LOG_LEVEL: 'info' };
      const first = await run(['migrate'], env);
      expect(first.code, describeExit(first)).toBe(0);
      expect(first.stdout).toMatch(/^applied: .*foundation/m);
      // The tables landed in that schema (and only there: the search_path came from the URL).
      expect(await db.withSchema(schema).selectFrom('admins').select('id').execute()).toEqual([]);
      const second = await run(['migrate'], env);
      expect(second.code, describeExit(second)).toBe(0);
      expect(second.stdout).toContain('database is up to date');
    },
    TEST_TIMEOUT_MS,
  );
});

describe('svc start (all-in-one, spec 3.4 bootstrap)', () => {
  const parse = (line: string): Record<string, any> | null => {
    try {
      return JSON.parse(line);
    } catch {
      return null;
    }
  };
  const listeningLine = (l: string) => /"msg":"listening on /.test(l);

  async function start(inst: Installation) {
    // No REDIS_URL for the child: `svc` has no setting for its Redis key prefix, so child
    // processes on one Redis would share rate-limit windows across tests and runs.
    // Port 0 for the gateway too: parallel tests must not collide on 8443.
    const env = { ...inst.env, SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1', SVC_GRPC_PORT: '0', SVC_GRPC_HOST: '127.0.0.1' };
    const svc = spawnSvc(['start'], env);
    const gateway = parse(await svc.waitForLine((l) => l.includes('agent gateway listening'), 'the gateway line')) as Record<string, any>;
    expect(gateway.grpc_port).toBeGreaterThan(0);
    const listening = parse(await svc.waitForLine(listeningLine, 'the "listening on" line')) as Record<string, any>;
    expect(listening.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listening.address).toBe(listening.url.replace('http://', ''));
    expect(listening.msg).toBe(`listening on ${listening.address} (this machine only); open ${listening.url}`);
    expect(listening.shared_state).toBe('memory');
    // No SMTP: the outbox with the embedded database (a trial on one machine), none with PostgreSQL.
    expect(listening.mail).toBe(pgMode ? 'none' : 'outbox');
    expect(listening.database).toEqual(pgMode ? expect.stringContaining('postgres') : join(inst.dir, 'pg'));
    return { svc, url: listening.url as string };
  }

  /**
   * SIGTERM -> graceful stop. Only send it once the server has answered a request made after
   * the last start-up log line: main.ts installs its SIGTERM handler only after start-up has
   * finished (after the "listening on" and setup_token lines), so an earlier SIGTERM kills
   * the process by signal (reported separately as a production bug).
   */
  async function stop(svc: Svc): Promise<Exit> {
    svc.child.kill('SIGTERM');
    return svc.exited;
  }

  it(
    'with no admin it logs a setup token; setup with it creates the owner; a restart logs no token',
    async () => {
      const inst = await newInstallation();
      const { svc, url } = await start(inst);
      const tokenLine = parse(await svc.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line')) as Record<string, any>;
      const token = tokenLine.setup_token as string;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
      expect(tokenLine.setup_url).toBe(`${url}/api/v1/setup`);
      expect(tokenLine.msg).toContain(`setup_token=${token}`);

      const api = createApiClient(url);
      const methods = await api.get('/api/v1/auth/methods');
      expect(methods.status).toBe(200);
      expect(methods.body).toMatchObject({ password: true, setup_required: true });
      const wrong = await api.post('/api/v1/setup', { token: 'not-the-token', email: EMAIL, password: PASSWORD });
      expect(wrong.status).toBe(401);
      const setup = await api.post('/api/v1/setup', { token, email: EMAIL, password: PASSWORD });
      expect(setup.status, setup.text).toBe(201);
      expect(setup.body).toMatchObject({ email: EMAIL, role: 'owner' });
      expect((await api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(200);
      // The customer surface is mounted too: an unknown link is its 404 (not the router's).
      const sub = await api.get(`/sub/${'A'.repeat(43)}`);
      expect(sub.status).toBe(404);
      expect(sub.body.type).toBe('urn:svc:problem:not-found');

      const exit = await stop(svc);
      expect(exit.code, describeExit(exit)).toBe(0);
      // The log never carries the owner's password.
      expect(exit.stdout).not.toContain(PASSWORD);

      const again = await start(inst);
      const api2 = createApiClient(again.url);
      expect((await api2.get('/api/v1/auth/methods')).body.setup_required).toBe(false);
      expect((await api2.post('/api/v1/setup', { token, email: 'b@example.com', password: PASSWORD })).status).toBe(404);
      expect((await api2.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(200);
      const exit2 = await stop(again.svc);
      expect(exit2.code, describeExit(exit2)).toBe(0);
      expect(exit2.stdout).not.toContain('setup_token');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a restart with still no admin logs a new token; the old one is refused',
    async () => {
      const inst = await newInstallation();
      const first = await start(inst);
      const firstToken = parse(await first.svc.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line'))?.setup_token;
      // An answer to a request sent after the token line: start-up (and handler set-up) is over.
      expect((await createApiClient(first.url).get('/api/v1/auth/methods')).body.setup_required).toBe(true);
      expect((await stop(first.svc)).code).toBe(0);

      const second = await start(inst);
      const secondToken = parse(await second.svc.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line'))?.setup_token;
      expect(secondToken).toBeTruthy();
      expect(secondToken).not.toBe(firstToken);
      const api = createApiClient(second.url);
      expect((await api.post('/api/v1/setup', { token: firstToken, email: EMAIL, password: PASSWORD })).status).toBe(401);
      expect((await api.post('/api/v1/setup', { token: secondToken, email: EMAIL, password: PASSWORD })).status).toBe(201);
      expect((await stop(second.svc)).code).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  // Each mode has its own rule for a second process on the same installation; only the
  // one that applies to the configured store is generated.
  if (!pgMode) {
    it(
      'embedded database: while svc start runs, svc admin create is refused (data dir in use) and works once it stopped',
      async () => {
        const inst = await newInstallation();
        const { svc, url } = await start(inst);
        await svc.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line');
        expect((await createApiClient(url).get('/api/v1/auth/methods')).status).toBe(200);

        const refused = await createAdmin(inst);
        expect(refused.code, describeExit(refused)).not.toBe(0);
        expect(refused.stderr).toContain(`in use by process ${svc.child.pid}`);
        expect(refused.stderr).toContain(inst.dir);

        expect((await stop(svc)).code).toBe(0);
        const created = await createAdmin(inst);
        expect(created.code, describeExit(created)).toBe(0);
      },
      TEST_TIMEOUT_MS,
    );
  } else {
    it(
      'PostgreSQL: svc admin create works while svc start runs, and the running server sees the admin at once',
      async () => {
        const inst = await newInstallation();
        const { svc, url } = await start(inst);
        await svc.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line');
        const api = createApiClient(url);
        expect((await api.get('/api/v1/auth/methods')).body.setup_required).toBe(true);

        const created = await createAdmin(inst);
        expect(created.code, describeExit(created)).toBe(0);
        expect((await api.get('/api/v1/auth/methods')).body.setup_required).toBe(false);
        expect((await api.post('/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(200);
        expect((await stop(svc)).code).toBe(0);
      },
      TEST_TIMEOUT_MS,
    );
  }

  it(
    'spec 5.9 rule 3: password sign-in off with no admin OAuth provider refuses to start (exit 78, EX_CONFIG)',
    async () => {
      const inst = await newInstallation();
      const res = await run(['start'], {
        ...inst.env,
        SVC_HTTP_PORT: '0',
        SVC_HTTP_HOST: '127.0.0.1',
        SVC_GRPC_PORT: '0',
        SVC_AUTH_PASSWORD_LOGIN: 'false',
      });
      expect(res.code, describeExit(res)).toBe(78);
      expect(res.stderr).toContain('refusing to start');
      expect(res.stderr).toContain('auth.password_login');
      expect(res.stderr).toMatch(/OAuth/);
      expect(res.stdout).not.toContain('listening on');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an invalid value refuses every command with exit 78 and names the variable',
    async () => {
      const inst = await newInstallation();
      const res = await run(['migrate'], { ...inst.env, SVC_HTTP_PORT: 'abc' });
      expect(res.code, describeExit(res)).toBe(78);
      expect(res.stderr).toContain('SVC_HTTP_PORT');
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the svc entry point', () => {
  it(
    'the bin script (apps/cli/bin/svc.mjs) runs the TypeScript command: --help prints the usage and exits 0',
    async () => {
      const res = await spawnSvc(['--help'], {}, undefined, { bin: true }).exited;
      expect(res.code, describeExit(res)).toBe(0);
      expect(res.stdout).toContain('usage: svc <command>');
      expect(res.stdout).toContain('svc admin reset-password --email E');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unknown command exits non-zero with the usage on stderr',
    async () => {
      const res = await run(['frobnicate'], {});
      expect(res.code, describeExit(res)).not.toBe(0);
      expect(res.stderr).toContain('unknown command: svc frobnicate');
      expect(res.stderr).toContain('usage: svc <command>');
    },
    TEST_TIMEOUT_MS,
  );
});
