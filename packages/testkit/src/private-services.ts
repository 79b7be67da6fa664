import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, portAccepts } from './engine-process.ts';
import { until } from './until.ts';

/**
 * A PostgreSQL server and a Redis server of a test file's own, on free ports in a temp
 * directory, for fault tests: they can be stopped, killed and started again without touching
 * the machine's shared 127.0.0.1:5432 / :6379 that other tests use. Both are made for speed
 * (no fsync: a killed server's writes are still in the OS's cache; commits stay synchronous,
 * so an immediate stop loses nothing acknowledged; Redis keeps nothing on disk): a restart keeps PostgreSQL's data (its WAL is replayed
 * after an immediate stop) and empties Redis, as a Redis without persistence does in production.
 */

const run = promisify(execFile);
const PG_BIN = process.env.SVC_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** `pg_ctl stop -m <mode>` (fast: rolls back and disconnects; immediate: no shutdown checkpoint, like a crash). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the server again on the same data and port; resolves once it accepts queries. */
  start(): Promise<void>;
  /** `pg_ctl restart -m <mode>`: stop, then start. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** A client of its own (the caller ends it): for holding a lock or reading rows beside the apps. */
  connect(): Promise<SqlClient>;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

/** The part of node-postgres's Client a test uses. */
export interface SqlClient {
  query<R = Record<string, any>>(text: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  end(): Promise<void>;
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** SHUTDOWN NOSAVE (clean) or SIGKILL; resolves once the process is gone. */
  stop(how?: 'shutdown' | 'kill9'): Promise<void>;
  /** Starts a new server on the same port (empty: no persistence); resolves once it answers. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Whether this machine can run private servers: PostgreSQL's binaries and redis-server are there. */
export async function privateServicesAvailable(): Promise<boolean> {
  try {
    await run(`${PG_BIN}/pg_ctl`, ['--version']);
    await run('redis-server', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** initdb refuses root: as root, the server runs as the `postgres` user (the Debian package's). */
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

async function pgCtl(args: string[]): Promise<void> {
  const [cmd, full] = asPostgres(`${PG_BIN}/pg_ctl`, args);
  await run(cmd, full, { timeout: 60_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-private-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  const port = await freePort();
  const [cmd, args] = asPostgres(`${PG_BIN}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  await run(cmd, args, { timeout: 60_000 });
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
    '-c shared_buffers=32MB',
  ].join(' ');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const start = async () => {
    await pgCtl(['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
    await until('private PostgreSQL accepts queries', async () => {
      const c = new pg.Client({ connectionString: url });
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } catch {
        return false;
      } finally {
        await c.end().catch(() => {});
      }
    });
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => pgCtl(['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  await start();
  return {
    url,
    port,
    stop,
    start,
    async restart(mode = 'fast') {
      await stop(mode);
      await start();
    },
    async connect() {
      const c = new pg.Client({ connectionString: url });
      // A client of a server the test restarts: its end is expected, not an uncaught error.
      c.on('error', () => {});
      await c.connect();
      return c as unknown as SqlClient;
    },
    async destroy() {
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-private-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    const c = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    child = c;
    exited = new Promise((r) => c.once('exit', () => r()));
    await until('private Redis accepts connections', () => portAccepts(port));
  };
  const stop = async (how: 'shutdown' | 'kill9' = 'shutdown') => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    if (how === 'kill9') c.kill('SIGKILL');
    else await run('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => c.kill('SIGTERM'));
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    async destroy() {
      await stop('kill9');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
