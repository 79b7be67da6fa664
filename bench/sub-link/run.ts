// `pnpm bench:sub-link` (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): GET
// /sub/{token} for a subscription with 10 inbounds, base64 format (a v2rayNG User-Agent), on
// PostgreSQL, served by the portal-api surface in its own process (one database read per
// request), then the same answers cached; each as apps without gzip fetch it and as apps that
// take gzip do (Accept-Encoding: gzip, what Android's HttpURLConnection under v2rayNG sends);
// beside it, in the same run, a bare node:http hello-world (bench/auth/hello.ts, the baseline)
// and the floor: a bare node:http server sending the very answers the product gave (status,
// headers, body; floor.ts), so the reading can tell the cost of the bytes from the cost of the
// product's work. Every server is started first; then BENCH_ROUNDS rounds (default 3) load
// each in turn for BENCH_SECONDS (default 5), and the figures are the rounds' medians.
// `pnpm bench:sub-link:pglite` (BENCH_DATABASE=pglite): the same on the embedded default
// (PGlite in the server child's data directory, no DATABASE_URL).
// Load from wrk when installed, else autocannon. Appends to bench/BENCHMARKS.md.
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { connectDatabase } from '@svc/db';
import { sql } from 'kysely';
import { type LoadResult, load, loadClient } from '../auth/load.ts';
import { child, stopChild } from '../common/children.ts';
import { pct as percentile } from '../common/run.ts';
import type { RecordedAnswer } from './floor.ts';

const here = import.meta.dirname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
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
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
  /** A server child of the product with this answer cache setting, checked once: its links and the answers it gave. */
  const product = async (cacheSeconds: number) => {
    const server = await child<{ url: string; paths: string[]; inbounds: number; database: string }>(join(here, 'server.ts'), {
      env: {
        DATABASE_URL,
        ...(PGLITE ? {} : { BENCH_SCHEMA: `${SCHEMA}_${cacheSeconds}` }),
        SVC_SUB_CACHE_SECONDS: String(cacheSeconds),
      },
      execArgv: profiled,
    });
    // Kept as the bytes sent (fetch would gunzip): what the floor sends.
    const plain = await rawGet(`${server.msg.url}${server.msg.paths[0]}`, ua);
    const body = Buffer.from(Buffer.from(plain.body, 'base64').toString(), 'base64').toString().split('\n').filter(Boolean);
    if (plain.status !== 200 || body.length !== server.msg.inbounds)
      throw new Error(`the link answered ${plain.status} with ${body.length} links`);
    const gzip = await rawGet(`${server.msg.url}${server.msg.paths[0]}`, uaGzip);
    if (!gzip.headers.some(([k, v]) => k === 'content-encoding' && v === 'gzip'))
      throw new Error('the link was not gzip’d for an app taking gzip');
    return { ...server, answers: { plain, gzip } };
  };
  const uncachedServer = await product(0);
  const cachedServer = await product(30);
  const dir = mkdtempSync(join(tmpdir(), 'svc-sub-floor-'));
  writeFileSync(join(dir, 'answers.json'), JSON.stringify(uncachedServer.answers));
  const floorServer = await child<{ url: string }>(join(here, 'floor.ts'), { env: { FLOOR_ANSWERS: join(dir, 'answers.json') } });
  rmSync(dir, { recursive: true, force: true });
  const hello = await child<{ url: string }>(join(here, '..', 'auth', 'hello.ts'));
  const { paths, inbounds, database } = uncachedServer.msg;
  const on = (url: string, headers: Record<string, string>, linkPaths: string[] | undefined) => ({
    url: `${url}/`,
    ...(linkPaths ? { paths: linkPaths } : {}),
    connections: CONNECTIONS,
    headers,
  });
  // Every server is up at once and idle but for the one under load; each round loads each in
  // turn, so a neighbour taking the machine for a while slows one round of all of them, not all
  // rounds of one. A figure is the median over the rounds; a ratio is the median of the rounds'
  // ratios (each against the hello-world of its own round).
  const targets = {
    bare: on(hello.msg.url, {}, undefined),
    uncached: on(uncachedServer.msg.url, ua, paths),
    uncachedGzip: on(uncachedServer.msg.url, uaGzip, paths),
    // Each product server has its own database (schema, or PGlite data dir): its own links.
    cached: on(cachedServer.msg.url, ua, cachedServer.msg.paths),
    cachedGzip: on(cachedServer.msg.url, uaGzip, cachedServer.msg.paths),
    floor: on(floorServer.msg.url, ua, undefined),
    floorGzip: on(floorServer.msg.url, uaGzip, undefined),
  };
  type Target = keyof typeof targets;
  const names = Object.keys(targets) as Target[];
  for (const t of names) await load({ ...targets[t], seconds: 3 }); // warm-up
  const rounds: Array<Record<Target, LoadResult>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {} as Record<Target, LoadResult>;
    for (const t of names) round[t] = await load({ ...targets[t], seconds: SECONDS });
    rounds.push(round);
    process.stderr.write(`sub-link bench: round ${r + 1}/${ROUNDS}: ${names.map((t) => `${t} ${Math.round(round[t].rps)}`).join(', ')}\n`);
  }
  await Promise.all([uncachedServer, cachedServer, floorServer, hello].map((c) => stopChild(c.proc)));
  // A figure counts only answers that are the link (a 404 costs something else).
  const failed = names.filter((t) => rounds.some((r) => r[t].errors > 0));
  if (failed.length > 0) throw new Error(`answers other than 200 under load: ${failed.join(', ')}`);

  const median = (xs: number[]) => percentile(xs, 50);
  /** The round whose rate is the median's: its latencies are shown with it. */
  const of = (t: Target): LoadResult => {
    const rps = median(rounds.map((r) => r[t].rps));
    const middle = rounds.find((r) => r[t].rps === rps)?.[t] as LoadResult;
    return { ...middle, rps, errors: rounds.reduce((n, r) => n + r[t].errors, 0) };
  };
  /** Median over the rounds of t's rate over `base`'s rate in the same round, percent. */
  const ratio = (t: Target, base: Target = 'bare') => median(rounds.map((r) => r[t].rps / r[base].rps)) * 100;

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
  const pct = (t: Target, base?: Target) => ratio(t, base).toFixed(0);
  const met = (t: Target, aim: number) => (ratio(t) >= aim ? 'met' : 'not met');
  const row = (label: string, t: Target) => {
    const r = of(t);
    const spread = rounds.map((x) => Math.round(x[t].rps).toLocaleString('en-US')).join(' / ');
    return `| ${label} | ${Math.round(r.rps).toLocaleString('en-US')} | ${spread} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} |`;
  };
  const uncached = of('uncached');
  const lines = [
    `### ${new Date().toISOString().slice(0, 10)} — GET /sub/{token}, 10 inbounds, base64, ${PGLITE ? 'PGlite (embedded default)' : 'PostgreSQL'}`,
    '',
    `Machine: ${cpu} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Commit ${rev}. Load average before: ${loadBefore}. ` +
      `Load: ${loadClient}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s on each server in turn (all started first, each warmed up 3 s; a figure is the median of the rounds, the latencies those of the median round), User-Agent v2rayNG (the base64 list), without Accept-Encoding and with \`Accept-Encoding: gzip\`, each request for one of ${paths.length.toLocaleString('en-US')} subscriptions' links picked at random. Product: the portal-api surface in its own process, /sub answered before Hono (@svc/http fast path) ` +
      `(each request's subscription read from the database: one prepared statement per event-loop turn for the requests of that turn, the subscription by its token hash, its client, this period's traffic, its group ids; what the groups grant and the settings cached), database ${database}, pool default.`,
    '',
    '| endpoint | req/s (median) | each round | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|---|',
    row(`GET /sub/{token} (${inbounds} inbounds on 5 nodes, base64), a database read per request (SVC_SUB_CACHE_SECONDS=0)`, 'uncached'),
    row('the same, the app taking gzip', 'uncachedGzip'),
    row('the same, answers cached in the portal process (default: 30 s, dropped on any change)', 'cached'),
    row('the same cached, the app taking gzip', 'cachedGzip'),
    row(
      'floor: bare node:http (own process) sending the answer above as recorded (status, headers, body; a new request id each time)',
      'floor',
    ),
    row("floor, the gzip'd answer", 'floorGzip'),
    row('baseline: bare node:http hello-world (own process)', 'bare'),
    '',
    `${uncached.rps >= TARGET_RPS ? 'Target met' : 'Target not met'} with a database read per request: ${Math.round(uncached.rps).toLocaleString('en-US')} req/s (aim ${TARGET_RPS.toLocaleString('en-US')}). ` +
      `Of the bare hello-world of the same round (median of the rounds), issue 37.5: uncached ${pct('uncached')}% without gzip, ${pct('uncachedGzip')}% with (aim ${UNCACHED_AIM}%: ${met('uncached', UNCACHED_AIM)} / ${met('uncachedGzip', UNCACHED_AIM)}); ` +
      `cached ${pct('cached')}% without gzip, ${pct('cachedGzip')}% with (aim ${CACHED_AIM}%: ${met('cached', CACHED_AIM)} / ${met('cachedGzip', CACHED_AIM)}). ` +
      `The floor (the same answers from a bare server) is ${pct('floor')}% / ${pct('floorGzip')}% of bare; of the floor, cached ${pct('cached', 'floor')}% / ${pct('cachedGzip', 'floorGzip')}%, uncached ${pct('uncached', 'floor')}% / ${pct('uncachedGzip', 'floorGzip')}%.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!process.env.BENCH_NO_APPEND) appendFileSync(join(here, '..', 'BENCHMARKS.md'), `\n${lines.join('\n')}\n`);
} finally {
  if (admin) {
    for (const suffix of ['', '_0', '_30']) await sql`drop schema if exists ${sql.id(`${SCHEMA}${suffix}`)} cascade`.execute(admin.db);
    await admin.destroy();
  }
}

/** A GET whose answer is kept as the bytes sent (fetch would decode a gzip'd body). */
function rawGet(url: string, headers: Record<string, string>): Promise<RecordedAnswer> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          pairs.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks).toString('base64') });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}
