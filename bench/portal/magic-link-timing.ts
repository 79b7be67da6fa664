// `pnpm bench:portal-magic-link` (add DATABASE_URL for PostgreSQL): POST /portal/v1/auth/magic-link
// answer times for known and unknown emails, interleaved at random from one connection (spec 5.7:
// the same answer; issue 14.3: similar timing), with, in the same run, the baseline of a route
// that reads nothing (GET /portal/v1/auth/methods). The worker runs beside it and writes the
// known emails' mails to the outbox, as `svc start` would.
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { child, stopChild } from '../common/children.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3000);
const here = import.meta.dirname;
const server = await child<{ url: string; emails: string[]; database: string }>(join(here, 'server.ts'));
const { url, emails } = server.msg;

async function timed(req: () => Promise<Response>): Promise<number> {
  const t = performance.now();
  const res = await req();
  await res.arrayBuffer();
  if (res.status >= 400) throw new Error(`status ${res.status}`);
  return performance.now() - t;
}
const ask = (email: string) => () =>
  fetch(`${url}/portal/v1/auth/magic-link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
const methods = () => fetch(`${url}/portal/v1/auth/methods`);

for (let i = 0; i < 200; i++) await timed(i % 2 ? ask(emails[i % emails.length] as string) : ask(`warm-${i}@example.com`)); // warm-up
const known: number[] = [];
const unknown: number[] = [];
const bare: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const r = Math.random();
  if (r < 0.4) known.push(await timed(ask(emails[i % emails.length] as string)));
  else if (r < 0.8) unknown.push(await timed(ask(`nobody-${i}@example.com`)));
  else bare.push(await timed(methods));
}
await stopChild(server.proc);

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
};
const row = (name: string, xs: number[]) =>
  `| ${name} | ${xs.length} | ${q(xs, 0.5).toFixed(2)} | ${q(xs, 0.9).toFixed(2)} | ${q(xs, 0.99).toFixed(2)} |`;
console.log(
  `bench:portal-magic-link ${new Date().toISOString()} · ${cpus().length}× ${cpus()[0]?.model} · ${(totalmem() / 2 ** 30).toFixed(0)} GiB · database ${server.msg.database}`,
);
console.log('| request | n | p50 ms | p90 ms | p99 ms |');
console.log('|---|---|---|---|---|');
console.log(row('magic link, known email (a token stored, a mail queued)', known));
console.log(row('magic link, unknown email', unknown));
console.log(row('baseline: GET /portal/v1/auth/methods (no database)', bare));
console.log(`known - unknown p50: ${(q(known, 0.5) - q(unknown, 0.5)).toFixed(2)} ms`);
