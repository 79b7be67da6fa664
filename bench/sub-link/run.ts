// `pnpm bench:sub-link` (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): GET
// /sub/{token} for a subscription with 10 inbounds, base64 format (a v2rayNG User-Agent), on
// PostgreSQL, served by the portal-api surface in its own process (one database read per
// request), then the same answers cached; each as apps without gzip fetch it and as apps that
// take gzip do (Accept-Encoding: gzip, what Android's HttpURLConnection under v2rayNG sends);
// beside it, in the same run, a bare node:http hello-world (bench/auth/hello.ts) before and
// after them (the baseline is their mean).
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
/** Issue 37.5: uncached >= 50% of the bare server on PostgreSQL, >= 30% on PGlite; cached >= 85%. */
const PGLITE = process.env.BENCH_DATABASE === 'pglite';
const UNCACHED_AIM = PGLITE ? 30 : 50;
const CACHED_AIM = 85;
const DATABASE_URL = PGLITE ? '' : (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const SCHEMA = `bench_sub_${randomBytes(4).toString('hex')}`;

// BENCH_CPU_PROF_DIR: the server child writes a V8 CPU profile there when it stops.
const profiled = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];

process.stderr.write(`sub-link bench: load from ${loadClient}${loadClient === 'wrk' ? '' : ' (wrk not installed)'}\n`);
const admin = PGLITE ? undefined : await connectDatabase({ url: DATABASE_URL, dataDir: '' });
if (admin) await sql`create schema ${sql.id(SCHEMA)}`.execute(admin.db);
try {
  const ua = { 'user-agent': 'v2rayNG/1.9.30' };
  const uaGzip = { ...ua, 'accept-encoding': 'gzip' };
  type Result = Awaited<ReturnType<typeof load>>;
  const bareRun = async () => {
    const hello = await child<{ url: string }>(join(here, '..', 'auth', 'hello.ts'));
    await load({ url: hello.msg.url, seconds: 2, connections: CONNECTIONS });
    const r = await load({ url: hello.msg.url, seconds: SECONDS, connections: CONNECTIONS });
    await stopChild(hello.proc);
    return r;
  };
  const bareBefore = await bareRun();
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
  let database = '';
  let inbounds = 0;
  let subscriptions = 0;
  /** The link under load, served by a fresh server child with this answer cache setting: as it is, then gzip'd. */
  const measure = async (cacheSeconds: number): Promise<{ plain: Result; gzip: Result }> => {
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
    const zipped = await fetch(`${server.msg.url}${server.msg.paths[0]}`, { headers: uaGzip });
    await zipped.arrayBuffer();
    if (zipped.headers.get('content-encoding') !== 'gzip') throw new Error('the link was not gzip’d for an app taking gzip');
    const spec = { url: `${server.msg.url}/`, paths: server.msg.paths, connections: CONNECTIONS, headers: ua };
    await load({ ...spec, seconds: 3 }); // warm-up
    const plain = await load({ ...spec, seconds: SECONDS });
    await load({ ...spec, headers: uaGzip, seconds: 3 });
    const gzip = await load({ ...spec, headers: uaGzip, seconds: SECONDS });
    subscriptions = server.msg.paths.length;
    await stopChild(server.proc);
    if (admin) await sql`drop schema if exists ${sql.id(`${SCHEMA}_${cacheSeconds}`)} cascade`.execute(admin.db);
    return { plain, gzip };
  };
  const sub = await measure(0);
  const cached = await measure(30);
  const bareAfter = await bareRun();
  const bare = { rps: (bareBefore.rps + bareAfter.rps) / 2 };

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
  const met = (r: { rps: number }, aim: number) => (r.rps >= (bare.rps * aim) / 100 ? 'met' : 'not met');
  const row = (label: string, r: { rps: number; p50: number; p99: number; errors: number }) =>
    `| ${label} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} |`;
  const lines = [
    `### ${new Date().toISOString().slice(0, 10)} — GET /sub/{token}, 10 inbounds, base64, ${PGLITE ? 'PGlite (embedded default)' : 'PostgreSQL'}`,
    '',
    `Machine: ${cpu} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Commit ${rev}. Load average before: ${loadBefore}. ` +
      `Load: ${loadClient}, ${CONNECTIONS} connections, ${SECONDS} s each after a warm-up, User-Agent v2rayNG (the base64 list), without Accept-Encoding and with \`Accept-Encoding: gzip\`, each request for one of ${subscriptions.toLocaleString('en-US')} subscriptions' links picked at random. Product: the portal-api surface in its own process, /sub answered before Hono (@svc/http fast path) ` +
      `(each request's subscription read from the database: one prepared statement per event-loop turn for the requests of that turn, the subscription by its token hash, its client, this period's traffic, its group ids; what the groups grant and the settings cached), database ${database}, pool default.`,
    '',
    '| endpoint | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    row(`GET /sub/{token} (${inbounds} inbounds on 5 nodes, base64), a database read per request (SVC_SUB_CACHE_SECONDS=0)`, sub.plain),
    row('the same, the app taking gzip', sub.gzip),
    row('the same, answers cached in the portal process (default: 30 s, dropped on any change)', cached.plain),
    row('the same cached, the app taking gzip', cached.gzip),
    row('baseline: bare node:http hello-world (own process), before the runs above', bareBefore),
    row('baseline: the same, after them', bareAfter),
    '',
    `${sub.plain.rps >= TARGET_RPS ? 'Target met' : 'Target not met'} with a database read per request: ${Math.round(sub.plain.rps).toLocaleString('en-US')} req/s (aim ${TARGET_RPS.toLocaleString('en-US')}). ` +
      `Of the bare hello-world (mean of the two, ${Math.round(bare.rps).toLocaleString('en-US')} req/s), issue 37.5: uncached ${pct(sub.plain)}% without gzip, ${pct(sub.gzip)}% with (aim ${UNCACHED_AIM}%: ${met(sub.plain, UNCACHED_AIM)} / ${met(sub.gzip, UNCACHED_AIM)}); ` +
      `cached ${pct(cached.plain)}% without gzip, ${pct(cached.gzip)}% with (aim ${CACHED_AIM}%: ${met(cached.plain, CACHED_AIM)} / ${met(cached.gzip, CACHED_AIM)}).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!process.env.BENCH_NO_APPEND) appendFileSync(join(here, '..', 'BENCHMARKS.md'), `\n${lines.join('\n')}\n`);
} finally {
  if (admin) {
    for (const suffix of ['', '_0', '_30']) await sql`drop schema if exists ${sql.id(`${SCHEMA}${suffix}`)} cascade`.execute(admin.db);
    await admin.destroy();
  }
}
