// `DATABASE_URL=postgres://… pnpm bench:subscriptions`: with 1,000,000 subscriptions and
// 10,000 clients in PostgreSQL, p50/p99 of GET /api/v1/subscriptions?status=active&limit=100
// at page 1 and at page 5,000 (keyset cursor), with the same page by OFFSET in plain SQL as
// the baseline; then 10,000 subscriptions created through the API, against plain INSERTs.
// The seeded schema (bench_subscriptions) is kept between runs; BENCH_RESEED=1 rebuilds it.
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { connectDatabase, migrateToLatest } from '@svc/db';
import { encodeCursor, encryptSecret } from '@svc/domain';
import { sql } from 'kysely';
import { child, stopChild } from '../common/children.ts';
import { seed } from './seed.ts';

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('bench:subscriptions measures PostgreSQL: set DATABASE_URL\n');
  process.exit(2);
}
const SCHEMA = 'bench_subscriptions';
// Fixed, so the kept schema stays bound to the same key across runs (it is bench data only).
const INSTALLATION_KEY = Buffer.alloc(32, 42);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const CREATES = Number(process.env.BENCH_CREATES ?? 10_000);
const CONCURRENCY = 16;

const handle = await connectDatabase({ url, dataDir: '', schema: SCHEMA, poolSize: CONCURRENCY });
const db = handle.db;
if (process.env.BENCH_RESEED) await sql`drop schema if exists ${sql.id(SCHEMA)} cascade; `.execute(db).catch(() => {});
await sql`create schema if not exists ${sql.id(SCHEMA)}`.execute(db);
await migrateToLatest(db);
const have = Number((await sql<{ n: string }>`select count(*) as n from subscriptions`.execute(db)).rows[0]?.n ?? 0);
let seedSeconds: number | null = null;
if (have < 1_000_000) {
  const t = performance.now();
  await sql`truncate subscriptions, clients cascade`.execute(db);
  await seed(db, encryptSecret(INSTALLATION_KEY, 'bench-link-token-0123456789abcdefghijklmnop'));
  seedSeconds = (performance.now() - t) / 1000;
}

const server = await child<{ url: string; email: string; password: string }>(join(import.meta.dirname, 'server.ts'), {
  env: { BENCH_SCHEMA: SCHEMA, SVC_INSTALLATION_KEY: INSTALLATION_KEY.toString('base64') },
});
const base = server.msg.url;
const login = await fetch(`${base}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: server.msg.email, password: server.msg.password }),
});
const token = ((await login.json()) as { access_token: string }).access_token;
const auth = { authorization: `Bearer ${token}` };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
async function timeIt(fn: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return { p50: pct(xs, 50), p99: pct(xs, 99) };
}

// The cursor of page 5,000 is the id of the 499,900th active subscription.
const after = (
  await sql<{ id: string }>`select id from subscriptions where status = 'active' order by id offset 499899 limit 1`.execute(db)
).rows[0]?.id;
if (!after) throw new Error('seed too small for page 5,000');
const page = (cursor?: string) => async () => {
  const res = await fetch(`${base}/api/v1/subscriptions?status=active&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth });
  const body = (await res.json()) as { items: unknown[] };
  if (res.status !== 200 || body.items.length !== 100) throw new Error(`page failed: ${res.status}`);
};
const first = await timeIt(page());
const last = await timeIt(page(encodeCursor(after)));
const offsetSql = (offset: number) => async () => {
  await sql`select * from subscriptions where status = 'active' order by id limit 100 offset ${offset}`.execute(db);
};
const sqlFirst = await timeIt(offsetSql(0));
const sqlOffset = await timeIt(offsetSql(499_900));

// Creating subscriptions through the API, 16 at a time, against plain single-row INSERTs.
const clientIds = (await sql<{ id: string }>`select id from clients order by id limit 1000`.execute(db)).rows.map((r) => r.id);
let next = 0;
let failures = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < CREATES) {
      const i = next++;
      const res = await fetch(`${base}/api/v1/subscriptions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: clientIds[i % clientIds.length], access_group_ids: [] }),
      });
      if (res.status !== 201) failures++;
      await res.arrayBuffer();
    }
  }),
);
const apiRate = CREATES / ((performance.now() - t0) / 1000);
let n2 = 0;
const t1 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (n2 < CREATES) {
      const i = n2++;
      await sql`insert into subscriptions (id, client_id, status, period_started_at, vless_uuid, vmess_uuid, trojan_password,
        shadowsocks_password, token_hash, token_enc, created_at, updated_at)
        values (${`sub_zraw${process.pid}_${i}`}, ${clientIds[i % clientIds.length]}, 'active', now(), gen_random_uuid(), gen_random_uuid(),
        'x', 'x', ${`raw-${process.pid}-${i}`}, 'x', now(), now())`.execute(db);
    }
  }),
);
const rawRate = CREATES / ((performance.now() - t1) / 1000);
// Keep the seeded set at its size for the next run.
await sql`delete from subscriptions where id > ${'sub_' + '0'.repeat(19) + '1000000'}`.execute(db);

await stopChild(server.proc);
await handle.destroy();

const f = (x: number) => x.toFixed(2);
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — subscriptions at 1,000,000 rows, PostgreSQL`,
  '',
  `Machine: ${cpus()[0]?.model ?? 'cpu'} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. ` +
    `${SAMPLES} sequential requests per latency figure.${seedSeconds !== null ? ` Seeding took ${seedSeconds.toFixed(0)} s.` : ''}`,
  '',
  '| measure | p50 ms | p99 ms |',
  '|---|---|---|',
  `| GET /subscriptions?status=active&limit=100, page 1 | ${f(first.p50)} | ${f(first.p99)} |`,
  `| same, page 5,000 (keyset cursor) | ${f(last.p50)} | ${f(last.p99)} |`,
  `| baseline: plain SQL, same page 1 | ${f(sqlFirst.p50)} | ${f(sqlFirst.p99)} |`,
  `| baseline: plain SQL, page 5,000 by OFFSET 499,900 | ${f(sqlOffset.p50)} | ${f(sqlOffset.p99)} |`,
  '',
  '| measure | rate |',
  '|---|---|',
  `| POST /subscriptions, ${CREATES.toLocaleString('en-US')} through the API, ${CONCURRENCY} at a time | ${apiRate.toFixed(0)}/s (failures: ${failures}) |`,
  `| baseline: plain single-row INSERTs, ${CONCURRENCY} at a time | ${rawRate.toFixed(0)}/s |`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(0);
