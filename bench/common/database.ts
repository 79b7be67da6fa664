// The database and the installation a run measures: a fresh, migrated schema on the PostgreSQL
// server (dropped at the end), the installation's CA made as the control plane makes it, and
// Redis when one answers.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { createMemoryBus, createMemoryJobQueue } from '@svc/bus';
import { connectDatabase, type Db, migrateToLatest } from '@svc/db';
import { createSealer, ensureCertificateAuthority, type Sealer, systemClock, type UnitOfWorkDeps } from '@svc/domain';
import { makeCsr } from '@svc/testkit/agent-simulator';
import pg from 'pg';
import { pino } from 'pino';
import { log, onCleanup } from './run.ts';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** Every connection of a run (the gateway's, the bench's) carries this application_name, so its backends can be told from other work. */
export const APP_NAME = `svc-bench-${process.pid}`;

/** DATABASE_URL (or the default) with the run's application_name. */
export function benchDatabaseUrl(): string {
  const u = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  u.searchParams.set('application_name', APP_NAME);
  return u.toString();
}

/** Our backends on the PostgreSQL server (by application_name) and its shared writers (checkpointer, WAL writer, background writer). */
export async function ourPostgresPids(pool: pg.Pool): Promise<number[]> {
  const r = await pool.query(
    `select pid from pg_stat_activity where application_name = $1 or backend_type in ('checkpointer', 'walwriter', 'background writer')`,
    [APP_NAME],
  );
  return r.rows.map((x: { pid: number }) => x.pid);
}

export interface BenchDatabase {
  /** URL reaching the bench schema (search_path), for the control-plane process. */
  url: string;
  schema: string;
  db: Db;
  pool: pg.Pool;
  serverVersion: string;
}

/** A fresh, migrated schema on the PostgreSQL server (DATABASE_URL), dropped at the end. */
export async function benchDatabase(poolSize = 8, prefix = 'bench_gateway'): Promise<BenchDatabase> {
  const base = benchDatabaseUrl();
  const schema = `${prefix}_${process.pid}`;
  const handle = await connectDatabase({ url: base, dataDir: '', schema, poolSize: 4 });
  onCleanup(async () => {
    await handle.destroy();
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
    log(`schema ${schema} dropped`);
  });
  await migrateToLatest(handle.db);
  const pool = new pg.Pool({ connectionString: base, max: poolSize, options: `-c search_path=${schema}` });
  onCleanup(() => pool.end());
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const v = (
    await pool.query(`select current_setting('server_version') as version, current_setting('shared_buffers') as sb,
      current_setting('max_wal_size') as mw, current_setting('synchronous_commit') as sc, current_setting('autovacuum') as av`)
  ).rows[0] as Record<string, string>;
  const serverVersion = `${v.version} (shared_buffers ${v.sb}, max_wal_size ${v.mw}, synchronous_commit ${v.sc}, autovacuum ${v.av})`;
  return { url: u.toString(), schema, db: handle.db, pool, serverVersion };
}

export interface Installation {
  /** 32 bytes, base64: the control plane is started with it, so it opens the CA we created. */
  installationKey: string;
  /** Seals and opens with that key, as the product's processes do. */
  secrets: Sealer;
  caCertPem: string;
  /** The CA key (bench only: handed to the workers that sign the node certificates). */
  caKeyPem: string;
  /** One agent key pair shared by every simulated node; one certificate per node. */
  agent: { csrPem: string; keyPem: string };
}

/**
 * What a bench's direct domain calls run with: the database, the system clock, a silent log,
 * and in-process bus and jobs (nothing listens: a bench measures the call, not its fan-out).
 */
export function benchDeps(db: Db, secrets: Sealer = createSealer(randomBytes(32))): UnitOfWorkDeps & { secrets: Sealer } {
  return { db, clock: systemClock, secrets, log: pino({ level: 'silent' }), bus: createMemoryBus(), jobs: createMemoryJobQueue() };
}

/** The installation's CA, made the way the control plane makes it (ensureCertificateAuthority). */
export async function installation(db: Db): Promise<Installation> {
  const key = randomBytes(32);
  const secrets = createSealer(key);
  const ca = await ensureCertificateAuthority(benchDeps(db, secrets));
  const row = await db.selectFrom('certificate_authority').select('key_enc').where('id', '=', 1).executeTakeFirstOrThrow();
  return {
    installationKey: key.toString('base64'),
    secrets,
    caCertPem: ca.certPem,
    caKeyPem: secrets.open(row.key_enc),
    agent: await makeCsr('bench-agent'),
  };
}

/** One link token for every seeded subscription, sealed with the installation key (the admin API opens it to show the link). */
export const sealedLinkToken = (inst: Installation) => inst.secrets.seal('bench-link-token-0123456789abcdefghijklmnop');

async function redisReachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** REDIS_URL (default redis://127.0.0.1:6379) when a Redis answers there; else the in-memory bus. */
export async function redisUrl(): Promise<string | undefined> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  return (await redisReachable(url)) ? url : undefined;
}
