// `pnpm bench:sub-link` (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): GET
// /sub/{token} for a subscription with 10 inbounds, base64 format (a v2rayNG User-Agent), on
// PostgreSQL, served by the portal-api surface in its own process (one database read per
// request); beside it, in the same run, a bare node:http hello-world (bench/auth/hello.ts).
// `pnpm bench:sub-link:pglite` (BENCH_DATABASE=pglite): the same on the embedded default
// (PGlite in the server child's data directory, no DATABASE_URL).
// Load from wrk when installed, else autocannon. Appends to bench/BENCHMARKS.md.
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { connectDatabase } from '@svc/db';
import { sql } from 'kysely';
import { load, loadClient } from '../auth/load.ts';
import { child, stopChild } from '../common/children.ts';

const here = import.meta.dirname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const TARGET_RPS = 8000;
/** Issue 17.4: uncached >= 25% of the bare server on PostgreSQL, >= 10% on PGlite; cached >= 50% on PostgreSQL. */
const PGLITE = process.env.BENCH_DATABASE === 'pglite';
const UNCACHED_AIM = PGLITE ? 10 : 25;
const DATABASE_URL = PGLITE ? '' : (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const SCHEMA = `bench_sub_${randomBytes(4).toString('hex')}`;

// BENCH_CPU_PROF_DIR: the server child writes a V8 CPU profile there when it stops.
const profiled = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];

process.stderr.write(`sub-link bench: load from ${loadClient}${loadClient === 'wrk' ? '' : ' (wrk not installed)'}\n`);
const admin = PGLITE ? undefined : await connectDatabase({ url: DATABASE_URL, dataDir: '' });
if (admin) await sql`create schema ${sql.id(SCHEMA)}`.execute(admin.db);
try {
  const ua = { 'user-agent': 'v2rayNG/1.9.30' };
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
  let database = '';
  let inbounds = 0;
  let subscriptions = 0;
  /** The link under load, served by a fresh server child with this answer cache setting. */
  const measure = async (cacheSeconds: number) => {
    const server = await child<{ url: string; paths: string[]; inbounds: number; database: string }>(join(here, 'server.ts'), {
      env: {
        DATABASE_URL,
        ...(PGLITE ? {} : { BENCH_SCHEMA: `${SCHEMA}_${cacheSeconds}` }),
        SVC_SUB_CACHE_SECONDS: String(cacheSeconds),
      },
      execArgv: profiled,
    });
    database = server.msg.database;
    inbounds = server.msg.inbounds;
    const check = await fetch(`${server.msg.url}${server.msg.paths[0]}`, { headers: ua });
    const body = Buffer.from(await check.text(), 'base64')
      .toString()
      .split('\n')
      .filter(Boolean);
    if (check.status !== 200 || body.length !== server.msg.inbounds)
      throw new Error(`the link answered ${check.status} with ${body.length} links`);
    const spec = { url: `${server.msg.url}/`, paths: server.msg.paths, connections: CONNECTIONS, headers: ua };
    await load({ ...spec, seconds: 3 }); // warm-up
    const result = await load({ ...spec, seconds: SECONDS });
    subscriptions = server.msg.paths.length;
    await stopChild(server.proc);
    if (admin) await sql`drop schema if exists ${sql.id(`${SCHEMA}_${cacheSeconds}`)} cascade`.execute(admin.db);
    return result;
  };
  const sub = await measure(0);
  const cached = await measure(30);
  const hello = await child<{ url: string }>(join(here, '..', 'auth', 'hello.ts'));
  await load({ url: hello.msg.url, seconds: 2, connections: CONNECTIONS });
  const bare = await load({ url: hello.msg.url, seconds: SECONDS, connections: CONNECTIONS });
  await stopChild(hello.proc);

  const rev = (() => {
    try {
      return execSync('git rev-parse --short HEAD').toString().trim();
    } catch {
      return 'unknown';
    }
  })();
  const cpu =
    cpus()[0]
      ?.model.replace(/\s+\d+-Core Processor/, '')
      .trim() ?? 'unknown';
  const pct = (r: { rps: number }) => ((r.rps / bare.rps) * 100).toFixed(0);
  const row = (label: string, r: { rps: number; p50: number; p99: number; errors: number }) =>
    `| ${label} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} |`;
  const lines = [
    `### ${new Date().toISOString().slice(0, 10)} — GET /sub/{token}, 10 inbounds, base64, ${PGLITE ? 'PGlite (embedded default)' : 'PostgreSQL'}`,
    '',
    `Machine: ${cpu} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Commit ${rev}. Load average before: ${loadBefore}. ` +
      `Load: ${loadClient}, ${CONNECTIONS} connections, ${SECONDS} s each after a warm-up, User-Agent v2rayNG (the base64 list), each request for one of ${subscriptions.toLocaleString('en-US')} subscriptions' links picked at random. Product: the portal-api surface in its own process, /sub answered before Hono (@svc/http fast path) ` +
      `(each request's subscription read from the database: one prepared statement per event-loop turn for the requests of that turn, the subscription by its token hash, its client, this period's traffic, its group ids; what the groups grant and the settings cached), database ${database}, pool default.`,
    '',
    '| endpoint | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    row(`GET /sub/{token} (${inbounds} inbounds on 5 nodes, base64), a database read per request (SVC_SUB_CACHE_SECONDS=0)`, sub),
    row('the same, answers cached in the portal process (default: 30 s, dropped on any change)', cached),
    row('baseline: bare node:http hello-world (own process)', bare),
    '',
    `${sub.rps >= TARGET_RPS ? 'Target met' : 'Target not met'} with a database read per request: ${Math.round(sub.rps).toLocaleString('en-US')} req/s (aim ${TARGET_RPS.toLocaleString('en-US')}), ${pct(sub)}% of the bare hello-world; cached: ${Math.round(cached.rps).toLocaleString('en-US')} req/s, ${pct(cached)}%. ` +
      `Issue 17.4: uncached ${pct(sub)}% of bare (aim ${UNCACHED_AIM}%: ${sub.rps >= (bare.rps * UNCACHED_AIM) / 100 ? 'met' : 'not met'})` +
      (PGLITE ? '.' : `, cached ${pct(cached)}% (aim 50%: ${cached.rps >= bare.rps / 2 ? 'met' : 'not met'}).`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!process.env.BENCH_NO_APPEND) appendFileSync(join(here, '..', 'BENCHMARKS.md'), `\n${lines.join('\n')}\n`);
} finally {
  if (admin) {
    for (const suffix of ['', '_0', '_30']) await sql`drop schema if exists ${sql.id(`${SCHEMA}${suffix}`)} cascade`.execute(admin.db);
    await admin.destroy();
  }
}
