// `pnpm bench:ua-rules` (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): what an
// admin's User-Agent rule costs on hostile User-Agents (issue 12.2). In this process: the
// catastrophic pattern ^(a|a)*$ on growing User-Agents, through the domain's chooseSubFormat
// (RE2, linear, the first 512 characters) and through the RE2 engine on the whole 100 KB;
// beside it, in the same run, JavaScript's backtracking RegExp (the engine used before) on
// 16..24 characters. Then over HTTP: GET /sub/{token} from a portal child that stores that rule
// and accepts 128 KiB of headers (node's default refuses more than 16 KiB with 431), with a 100
// KB User-Agent, sequentially, while /healthz is polled. Appends to bench/BENCHMARKS.md.
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { connectDatabase } from '@svc/db';
import { chooseSubFormat } from '@svc/domain';
import { sql } from 'kysely';
import { RE2JS } from 're2js';
import { child, stopChild } from '../common/children.ts';

const here = import.meta.dirname;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `bench_ua_${randomBytes(4).toString('hex')}`;
const PATTERN = '^(a|a)*$';
const rules = [{ user_agent: PATTERN, format: 'clash-meta' as const }];
const hostile = (n: number) => `${'a'.repeat(n)}!`;

const timed = (fn: () => unknown, runs = 1): number => {
  const start = performance.now();
  for (let i = 0; i < runs; i++) fn();
  return (performance.now() - start) / runs;
};

// Warm the engines once, then measure.
timed(() => chooseSubFormat(rules, hostile(100), undefined), 100);
const domain = [27, 512, 100_000].map((n) => ({ n, ms: timed(() => chooseSubFormat(rules, hostile(n), undefined), 20) }));
const re2 = RE2JS.compile(PATTERN, RE2JS.CASE_INSENSITIVE);
const wholeRe2 = [1_000, 10_000, 100_000].map((n) => ({ n, ms: timed(() => re2.matcher(hostile(n)).find(), 5) }));
const native = new RegExp(PATTERN, 'i');
const backtracking = [16, 18, 20, 22, 24].map((n) => ({ n, ms: timed(() => native.test(hostile(n))) }));

const admin = await connectDatabase({ url: DATABASE_URL, dataDir: '' });
await sql`create schema ${sql.id(SCHEMA)}`.execute(admin.db);
let http: { p50: number; max: number; status: number; health: number; healthMax: number };
try {
  const server = await child<{ url: string; paths: string[] }>(join(here, 'server.ts'), {
    env: { DATABASE_URL, BENCH_SCHEMA: SCHEMA, BENCH_SUBSCRIPTIONS: '1', BENCH_FORMAT_RULES: JSON.stringify(rules) },
    execArgv: ['--max-http-header-size=131072'],
  });
  const url = `${server.msg.url}${server.msg.paths[0]}`;
  const ua = { 'user-agent': hostile(100_000) };
  for (let i = 0; i < 5; i++) await (await fetch(url, { headers: ua })).text();
  const times: number[] = [];
  const healthTimes: number[] = [];
  let status = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const t = performance.now();
      await (await fetch(`${server.msg.url}/healthz`)).text();
      healthTimes.push(performance.now() - t);
    }
  })();
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: ua });
    await res.text();
    status = res.status;
    times.push(performance.now() - t);
  }
  polling = false;
  await poll;
  await stopChild(server.proc);
  times.sort((a, b) => a - b);
  http = {
    p50: times[Math.floor(times.length / 2)] ?? 0,
    max: times.at(-1) ?? 0,
    status,
    health: healthTimes.length,
    healthMax: Math.max(...healthTimes),
  };
} finally {
  await sql`drop schema if exists ${sql.id(SCHEMA)} cascade`.execute(admin.db);
  await admin.destroy();
}

const fmt = (ms: number) => (ms < 0.01 ? ms.toFixed(4) : ms.toFixed(2));
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — User-Agent rule \`${PATTERN}\` on hostile User-Agents (\`a…a!\`)`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}.`,
  '',
  '| What | User-Agent length | ms per match |',
  '|---|---|---|',
  ...domain.map((r) => `| chooseSubFormat (RE2, first 512 characters) | ${r.n.toLocaleString('en-US')} | ${fmt(r.ms)} |`),
  ...wholeRe2.map((r) => `| RE2 engine on the whole User-Agent | ${r.n.toLocaleString('en-US')} | ${fmt(r.ms)} |`),
  ...backtracking.map((r) => `| baseline: JavaScript RegExp (backtracking, before) | ${r.n} | ${fmt(r.ms)} |`),
  '',
  `Over HTTP (portal child on PostgreSQL, the rule stored, 128 KiB header limit): 100 sequential GET /sub/{token} with a 100 KB User-Agent answered ${http.status}, p50 ${http.p50.toFixed(2)} ms, slowest ${http.max.toFixed(2)} ms; /healthz polled meanwhile answered ${http.health} times, slowest ${http.healthMax.toFixed(2)} ms.`,
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);
appendFileSync(join(here, '..', 'BENCHMARKS.md'), `\n${lines.join('\n')}`);
