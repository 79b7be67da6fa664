// `pnpm bench:lists` (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): the
// admin lists' search and sort (issue 30 item 6) at 1,000,000 subscriptions over 500,000
// clients in PostgreSQL; `pnpm bench:lists:pglite` (BENCH_DATABASE=pglite): the same at
// 100,000 on the embedded database, through the same HTTP API. Search pages a panel operator
// asks for (a customer's email fragment, 2 characters, an id prefix, a note word, a very
// common term; sorted first pages, a walk of 20 pages by cursor, the unfiltered first page),
// each up to 200 sequential GETs (a kind stops after 30 s once it has 5; a request is given up
// at 20 s) with limit=50 and search terms taken from the seeded rows; beside
// them, in the same run, the same pages as one plain-SQL statement each (the search OR-ed in one
// WHERE, as the lists ran it before 537412f planned it as branches: the baseline), and the substring
// searches with bitmap scans off (the trigram GIN indexes unusable). The seeded data is kept
// between runs (schema bench_lists; PGlite: a data directory under the system's temp dir);
// BENCH_RESEED=1 rebuilds it. Appends to bench/BENCHMARKS.md (BENCH_NO_APPEND=1: print only).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDatabase, type DatabaseHandle, migrateToLatest } from '@svc/db';
import { encryptSecret } from '@svc/domain';
import { type RawBuilder, sql } from 'kysely';
import { child, stopChild } from '../common/children.ts';
import { DEFAULT_DATABASE_URL } from '../common/database.ts';
import { env, loadNow, log, machine, n, pct, publish, quietMachine, revision } from '../common/run.ts';
import { NOTE_WORDS, seed } from './seed.ts';

const PGLITE = process.env.BENCH_DATABASE === 'pglite';
const DATABASE_URL = PGLITE ? '' : process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
const SCHEMA = 'bench_lists';
const DATA_DIR = join(tmpdir(), 'svc-bench-lists-pglite');
const SUBSCRIPTIONS = env('BENCH_SUBSCRIPTIONS', PGLITE ? 100_000 : 1_000_000);
const CLIENTS = Math.floor(SUBSCRIPTIONS / 2);
const SAMPLES = env('BENCH_SAMPLES', 200);
/** The substring searches without their indexes are slow: fewer samples. */
const SLOW_SAMPLES = env('BENCH_SLOW_SAMPLES', 50);
const WARMUP = 10;
/**
 * A kind stops after this many seconds of samples (warm-up: a third of it), once it has
 * MIN_SAMPLES: some searches take seconds each, and the run should end within the hour.
 */
const KIND_SECONDS = env('BENCH_KIND_SECONDS', 30);
const MIN_SAMPLES = 5;
/** A request or statement is given up after this long (PostgreSQL: cancelled), and counted at this time. */
const TIMEOUT_MS = env('BENCH_TIMEOUT_SECONDS', 20) * 1000;
const APP_NAME = `svc-bench-lists-${process.pid}`;
const LIMIT = 50;
const WALK = 20;
/** Issue 30 item 6: a search page's p99. */
const TARGET_MS = PGLITE ? 200 : 100;
// Fixed, so the kept data stays bound to the same key across runs (it is bench data only).
const INSTALLATION_KEY = Buffer.alloc(32, 42);
/** As the domain's list-query.ts: counted up to here, the planner's estimate beyond. */
const COUNT_EXACT_UP_TO = 10_000;

const loads: Record<string, string> = { before: await quietMachine() };
if (PGLITE && process.env.BENCH_RESEED) rmSync(DATA_DIR, { recursive: true, force: true });
// One connection: the plain-SQL baselines run on it, and `set enable_bitmapscan` stays on it.
let handle: DatabaseHandle = await connectDatabase(
  PGLITE ? { dataDir: DATA_DIR } : { url: DATABASE_URL, dataDir: '', schema: SCHEMA, poolSize: 1 },
);
let db = handle.db;
if (!PGLITE && process.env.BENCH_RESEED) {
  await sql`drop schema if exists ${sql.id(SCHEMA)} cascade`.execute(db);
  await handle.destroy();
  handle = await connectDatabase({ url: DATABASE_URL, dataDir: '', schema: SCHEMA, poolSize: 1 });
  db = handle.db;
}
await migrateToLatest(db);
const count = async (table: 'subscriptions' | 'clients') =>
  Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]?.n ?? 0);
let seedSeconds: number | null = null;
if ((await count('subscriptions')) !== SUBSCRIPTIONS || (await count('clients')) !== CLIENTS) {
  log(`seeding ${n(SUBSCRIPTIONS)} subscriptions over ${n(CLIENTS)} clients`);
  const t = performance.now();
  await sql`truncate subscriptions, clients cascade`.execute(db);
  await seed(db, encryptSecret(INSTALLATION_KEY, 'bench-link-token-0123456789abcdefghijklmnop'), CLIENTS, SUBSCRIPTIONS);
  seedSeconds = (performance.now() - t) / 1000;
  log(`seeded in ${seedSeconds.toFixed(0)} s`);
}
const version = (await sql<{ v: string }>`select version() as v`.execute(db)).rows[0]?.v ?? '';
const settings = PGLITE
  ? undefined
  : (
      await sql<Record<string, string>>`select current_setting('shared_buffers') as sb, current_setting('work_mem') as wm,
        current_setting('autovacuum') as av`.execute(db)
    ).rows[0];
const database = PGLITE
  ? `PGlite (${version.split(' on ')[0]}, embedded, in the server child's process)`
  : `${version.split(' on ')[0]} (shared_buffers ${settings?.sb}, work_mem ${settings?.wm}, autovacuum ${settings?.av})`;

// ---- search terms, from the seeded rows

const sampleRows = async <T>(q: RawBuilder<T>) => (await q.execute(db)).rows;
const forSubscriptions = await sampleRows(
  sql<{ id: string; email: string }>`select s.id, c.email from subscriptions s join clients c on c.id = s.client_id
    order by md5(s.id) limit ${SAMPLES}`,
);
const forClients = await sampleRows(sql<{ email: string }>`select email from clients order by md5(id) limit ${SAMPLES}`);
/** What an operator types of a customer's address: its local part from the third character on (at least 3 characters). */
const fragment = (email: string) => {
  const local = email.split('@')[0] as string;
  return local.length >= 5 ? local.slice(2) : local;
};
const COMMON = ['gmail', 'gmail.com', 'mail.ru', 'yahoo', 'proton'];

type List = 'subscriptions' | 'clients';
interface Kind {
  label: string;
  list: List;
  /** One query string per sample (cycled). */
  queries: Array<Record<string, string>>;
  /** The worst case: reported on its own too. */
  worst?: boolean;
  /** Walk of WALK pages by cursor: the pages after the first are timed. */
  walk?: boolean;
  /** Also measured in plain SQL with bitmap scans off. */
  noIndex?: boolean;
}
const kinds: Kind[] = [
  {
    label: "q = a fragment of a customer's email (≥ 3 characters)",
    list: 'subscriptions',
    queries: forSubscriptions.map((r) => ({ q: fragment(r.email) })),
    noIndex: true,
  },
  {
    label: "q = a fragment of a customer's email (≥ 3 characters)",
    list: 'clients',
    queries: forClients.map((r) => ({ q: fragment(r.email) })),
    noIndex: true,
  },
  {
    label: 'q = the first 2 characters of an email (prefix)',
    list: 'subscriptions',
    queries: forSubscriptions.map((r) => ({ q: r.email.slice(0, 2) })),
  },
  {
    label: 'q = the first 2 characters of an email (prefix)',
    list: 'clients',
    queries: forClients.map((r) => ({ q: r.email.slice(0, 2) })),
  },
  {
    label: 'q = the first 12 characters of an id',
    list: 'subscriptions',
    queries: forSubscriptions.map((r) => ({ q: r.id.slice(0, 12) })),
  },
  { label: 'q = a note word (family, reseller, ...)', list: 'subscriptions', queries: NOTE_WORDS.map((q) => ({ q })) },
  { label: 'q = a note word (family, reseller, ...)', list: 'clients', queries: NOTE_WORDS.map((q) => ({ q })) },
  { label: 'status=active&sort=expires, first page', list: 'subscriptions', queries: [{ status: 'active', sort: 'expires' }] },
  { label: 'sort=-used, first page', list: 'subscriptions', queries: [{ sort: '-used' }] },
  { label: `sort=expires, pages 2–${WALK + 1} by cursor`, list: 'subscriptions', queries: [{ sort: 'expires' }], walk: true },
  { label: 'unfiltered first page (total estimated)', list: 'subscriptions', queries: [{}] },
  { label: 'unfiltered first page (total estimated)', list: 'clients', queries: [{}] },
  {
    label: `q = a very common term (${COMMON.join(', ')}): worst case`,
    list: 'subscriptions',
    queries: COMMON.map((q) => ({ q })),
    worst: true,
  },
  { label: `q = a very common term (${COMMON.join(', ')}): worst case`, list: 'clients', queries: COMMON.map((q) => ({ q })), worst: true },
];

// ---- the same pages in plain SQL, the search OR-ed in one WHERE: what the lists ran before 537412f (the baseline)

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const EXPIRY = sql`coalesce(expires_at, '9999-12-31T00:00:00Z'::timestamptz)`;

/** The filtered query's FROM and WHERE, as the domain builds it. */
function filtered(list: List, p: Record<string, string>, now: Date): RawBuilder<unknown> {
  const where: RawBuilder<unknown>[] = [];
  if (p.status === 'active') where.push(sql`status = ${'active'} and (expires_at is null or expires_at > ${now})`);
  const text = p.q?.trim() ?? '';
  if (text !== '') {
    const lower = likeEscape(text.toLowerCase());
    const substring = [...text].length >= 3;
    const contains = `%${lower}%`;
    const prefix = `${lower}%`;
    const emails = substring ? contains : prefix;
    const note = substring ? sql` or note ilike ${contains}` : sql``;
    where.push(
      list === 'subscriptions'
        ? sql`(id like ${prefix} or client_id in (select clients.id from clients where clients.email like ${emails})${note})`
        : sql`(id like ${prefix} or email like ${emails}${note})`,
    );
  }
  // The subscriptions with their counters (the sort by traffic reads used_bytes there), as the product's list joins them.
  const table = list === 'subscriptions' ? sql`subscriptions join subscription_counters on subscription_id = id` : sql.table(list);
  return sql`from ${table}${where.length ? sql` where ${sql.join(where, sql` and `)}` : sql``}`;
}

interface Position {
  key: string | null;
  after: string;
}
/** The page's statements: on the first page the count (and the planner's estimate past 10,000), then the rows. */
async function sqlPage(list: List, p: Record<string, string>, position?: Position): Promise<number> {
  const now = new Date();
  const from = filtered(list, p, now);
  if (!position) {
    const counted = await sql<{
      n: string;
    }>`select count(*) as n from (select 1 as one ${from} limit ${COUNT_EXACT_UP_TO + 1}) as matching`.execute(db);
    if (Number(counted.rows[0]?.n) > COUNT_EXACT_UP_TO) await sql`explain (format json) select 1 as one ${from}`.execute(db);
  }
  const desc = p.sort?.startsWith('-') ?? false;
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const key = p.sort?.replace(/^-/, '') === 'expires' ? EXPIRY : p.sort?.replace(/^-/, '') === 'used' ? sql`used_bytes` : undefined;
  let q: RawBuilder<unknown>;
  if (key) {
    const cast =
      p.sort?.replace(/^-/, '') === 'expires' ? sql`cast(${position?.key} as timestamptz)` : sql`cast(${position?.key} as bigint)`;
    const hasWhere = p.status !== undefined || (p.q ?? '') !== '';
    const after = position
      ? sql` ${sql.raw(hasWhere ? 'and' : 'where')} (${key}, id) ${sql.raw(desc ? '<' : '>')} (${cast}, ${position.after})`
      : sql``;
    q = sql`select *, ${key} as sort_key ${from}${after} order by ${key} ${dir}, id ${dir} limit ${LIMIT + 1}`;
  } else {
    q = sql`select * ${from} order by id ${dir} limit ${LIMIT + 1}`;
  }
  return (await q.execute(db)).rows.length;
}

/** Keyset positions of pages 2..WALK+1 of sort=expires (the last row of the page before each). */
const walkPositions = (
  await sql<{ key: Date; id: string; rn: string }>`select key, id, rn from (
      select ${EXPIRY} as key, id, row_number() over (order by ${EXPIRY}, id) as rn from subscriptions
      order by ${EXPIRY}, id limit ${WALK * LIMIT}) as w where rn % ${LIMIT} = 0`.execute(db)
).rows.map((r) => ({ key: new Date(r.key).toISOString(), after: r.id }));

interface Timing {
  p50: number;
  p99: number;
  xs: number[];
}
const timing = (xs: number[]): Timing => ({ p50: pct(xs, 50), p99: pct(xs, 99), xs });
/** Statements cancelled at TIMEOUT_MS (PostgreSQL's statement_timeout): the sample counts at that time. */
let sqlTimeouts = 0;
const orTimeout = async (run: Promise<unknown>) => {
  try {
    await run;
  } catch (err) {
    if ((err as { code?: string }).code !== '57014') throw err;
    sqlTimeouts++;
  }
};
if (!PGLITE) await sql`set statement_timeout = ${sql.lit(TIMEOUT_MS)}`.execute(db);
/** Samples of `fn` (each given up at TIMEOUT_MS, and then counted at it), after a warm-up. */
async function timed(samples: number, fn: (i: number) => Promise<void>): Promise<Timing> {
  const warm = performance.now();
  for (let i = 0; i < WARMUP && performance.now() - warm < (KIND_SECONDS * 1000) / 3; i++) await fn(i);
  const xs: number[] = [];
  const start = performance.now();
  for (let i = 0; i < samples && (i < MIN_SAMPLES || performance.now() - start < KIND_SECONDS * 1000); i++) {
    const t = performance.now();
    await fn(i);
    xs.push(Math.min(TIMEOUT_MS, performance.now() - t));
  }
  return timing(xs);
}

const pick = <T>(xs: T[], i: number) => xs[i % xs.length] as T;
function withAppName(url: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', APP_NAME);
  return u.toString();
}
const plain = new Map<Kind, Timing>();
const noIndex = new Map<Kind, Timing>();
for (const k of kinds) {
  log(`plain SQL: ${k.list}, ${k.label}`);
  plain.set(
    k,
    await timed(SAMPLES, async (i) => {
      if (k.walk) await orTimeout(sqlPage(k.list, pick(k.queries, 0), pick(walkPositions, i)));
      else await orTimeout(sqlPage(k.list, pick(k.queries, i)));
    }),
  );
}
for (const k of kinds.filter((x) => x.noIndex)) {
  log(`plain SQL, bitmap scans off: ${k.list}, ${k.label}`);
  await sql`set enable_bitmapscan = off`.execute(db);
  noIndex.set(
    k,
    await timed(SLOW_SAMPLES, async (i) => {
      await orTimeout(sqlPage(k.list, pick(k.queries, i)));
    }),
  );
  await sql`reset enable_bitmapscan`.execute(db);
}
// PGlite: one process at a time holds the data directory; the server child opens it next.
// PostgreSQL: the connection stays, to cancel the server's statements of a request given up.
if (PGLITE) await handle.destroy();

// ---- the same pages through the admin API (its own process)

const server = await child<{ url: string; email: string; password: string }>(join(import.meta.dirname, 'server.ts'), {
  env: {
    DATABASE_URL: PGLITE ? '' : withAppName(DATABASE_URL),
    SVC_INSTALLATION_KEY: INSTALLATION_KEY.toString('base64'),
    ...(PGLITE ? { SVC_DATA_DIR: DATA_DIR } : { BENCH_SCHEMA: SCHEMA }),
  },
});
const base = server.msg.url;
let apiTimeouts = 0;
const login = await fetch(`${base}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: server.msg.email, password: server.msg.password }),
});
const token = ((await login.json()) as { access_token: string }).access_token;
const auth = { authorization: `Bearer ${token}` };

interface Body {
  items: unknown[];
  next_cursor: string | null;
  total: number | null;
  total_exact: boolean | null;
}
async function get(list: List, p: Record<string, string>): Promise<Body> {
  const qs = new URLSearchParams({ ...p, limit: String(LIMIT) });
  let res: Response;
  let body: Body;
  try {
    res = await fetch(`${base}/api/v1/${list}?${qs}`, { headers: auth, signal: AbortSignal.timeout(TIMEOUT_MS) });
    body = (await res.json()) as Body;
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
    // Given up: the server's statements for it are cancelled (PostgreSQL), not left running.
    apiTimeouts++;
    if (!PGLITE)
      await sql`select pg_cancel_backend(pid) from pg_stat_activity where application_name = ${APP_NAME} and state = 'active'`.execute(db);
    return { items: [], next_cursor: null, total: null, total_exact: null };
  }
  if (res.status !== 200) throw new Error(`GET /${list}?${qs} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

interface Measured {
  t: Timing;
  rows: number[];
  totals: Array<{ total: number; exact: boolean }>;
}
const api = new Map<Kind, Measured>();
for (const k of kinds) {
  log(`API: ${k.list}, ${k.label}`);
  const rows: number[] = [];
  const totals: Measured['totals'] = [];
  let t: Timing;
  if (k.walk) {
    // Walks of WALK pages after the first, as an operator paging on: each page's GET timed.
    const xs: number[] = [];
    for (let w = 0; xs.length < SAMPLES; w++) {
      let body = await get(k.list, pick(k.queries, 0));
      for (let page = 0; page < WALK && body.next_cursor && xs.length < SAMPLES; page++) {
        const start = performance.now();
        body = await get(k.list, { ...pick(k.queries, 0), cursor: body.next_cursor });
        if (w > 0) xs.push(performance.now() - start); // the first walk warms up
        rows.push(body.items.length);
      }
    }
    t = timing(xs);
  } else {
    t = await timed(SAMPLES, async (i) => {
      const body = await get(k.list, pick(k.queries, i));
      rows.push(body.items.length);
      if (body.total !== null) totals.push({ total: body.total, exact: body.total_exact === true });
    });
  }
  api.set(k, { t, rows, totals });
}
await stopChild(server.proc);
if (!PGLITE) await handle.destroy();
loads.after = loadNow();

// ---- results

const f = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const median = (xs: number[]) => pct(xs, 50);
const totalText = (m: Measured) => {
  if (m.totals.length === 0) return '– (later pages have none)';
  const exact = m.totals.filter((x) => x.exact).map((x) => x.total);
  const estimated = m.totals.filter((x) => !x.exact).map((x) => x.total);
  const parts: string[] = [];
  if (exact.length) parts.push(`${n(median(exact))} counted`);
  if (estimated.length) parts.push(`~${n(median(estimated))} estimated`);
  return parts.join(', ');
};
const all = kinds.flatMap((k) => api.get(k)?.t.xs ?? []);
const mix = timing(all);
const worst = kinds.filter((k) => k.worst).flatMap((k) => api.get(k)?.t.xs ?? []);
const searches = timing(kinds.filter((k) => !k.worst).flatMap((k) => api.get(k)?.t.xs ?? []));
const over = kinds.filter((k) => (api.get(k)?.t.p99 ?? 0) >= TARGET_MS);
const size = `${n(SUBSCRIPTIONS)} subscriptions over ${n(CLIENTS)} clients`;
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — lists search and sort, ${size}, ${PGLITE ? 'PGlite (embedded default)' : 'PostgreSQL'}`,
  '',
  `Machine: ${machine()}, ${database}. Commit ${revision()}. Load average (1/5/15 min) before: ${loads.before}; after: ${loads.after}. ` +
    `Up to ${SAMPLES} sequential GETs per query kind after up to ${WARMUP} warm-up ones (the walk: up to ${SAMPLES / WALK} walks of ${WALK} pages after a first one), ` +
    `a kind stopping after ${KIND_SECONDS} s of samples once it has ${MIN_SAMPLES} (the samples column); a request or statement given up at ${TIMEOUT_MS / 1000} s (cancelled on PostgreSQL) counts as ${TIMEOUT_MS / 1000} s ` +
    `(this run: ${apiTimeouts} requests, ${sqlTimeouts} plain-SQL statements); limit=${LIMIT}, ` +
    `search terms taken from the seeded rows (${SAMPLES} subscriptions' and clients' emails picked by a hash; the note words; the common terms), ` +
    `the admin API in its own process, one owner signed in (links shown).` +
    ` Plain SQL: the page as one statement with the search OR-ed in one WHERE, as the lists ran it before 537412f (the count up to 10,001 and the planner's estimate past 10,000 on a first page, then the ${LIMIT + 1} rows), on one connection from the bench process; ` +
    `without the trigram indexes: the same with \`enable_bitmapscan = off\`, up to ${SLOW_SAMPLES} samples.` +
    (seedSeconds !== null ? ` Seeding took ${seedSeconds.toFixed(0)} s.` : ''),
  '',
  '| list | query | API p50 ms | API p99 ms | plain SQL p50 ms | plain SQL p99 ms | samples API / SQL | rows on the page (median) | first page total (median) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...kinds.map((k) => {
    const m = api.get(k) as Measured;
    const s = plain.get(k) as Timing;
    return `| /${k.list} | ${k.label} | ${f(m.t.p50)} | ${f(m.t.p99)} | ${f(s.p50)} | ${f(s.p99)} | ${m.t.xs.length} / ${s.xs.length} | ${median(m.rows)} | ${totalText(m)} |`;
  }),
  ...kinds
    .filter((k) => k.noIndex)
    .map((k) => {
      const s = noIndex.get(k) as Timing;
      return `| /${k.list} | baseline: ${k.label}, plain SQL, bitmap scans off (trigram indexes unused) | – | – | ${f(s.p50)} | ${f(s.p99)} | – / ${s.xs.length} | | |`;
    }),
  '',
  `The whole mix through the API (${n(all.length)} GETs, every kind above, the worst case included): p50 ${f(mix.p50)} ms, p99 ${f(mix.p99)} ms. ` +
    `Without the very common terms: p50 ${f(searches.p50)} ms, p99 ${f(searches.p99)} ms. The very common terms alone: p50 ${f(pct(worst, 50))} ms, p99 ${f(pct(worst, 99))} ms.`,
  '',
  `Target (issue 30 item 6: p99 < ${TARGET_MS} ms at ${n(SUBSCRIPTIONS)} subscriptions on ${PGLITE ? 'PGlite' : 'PostgreSQL'}): ` +
    (mix.p99 < TARGET_MS ? 'met for the whole mix' : 'not met for the whole mix') +
    (over.length
      ? `; kinds at or over it: ${over.map((k) => `/${k.list} ${k.label} (p99 ${f((api.get(k) as Measured).t.p99)} ms)`).join('; ')}.`
      : '; every kind under it.'),
];
publish(lines);
process.exit(0);
