// `pnpm bench:auth` (add DATABASE_URL for PostgreSQL): logins/s at the configured Argon2id
// parameters, GET /api/v1/auth/me req/s, and, in the same run, the baselines: a bare
// node:http hello-world and bare JWT verifies with the same key. Also /auth/me latency
// while a login flood runs: the flood must queue behind the hashing slots, not starve it.
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { child, stopChild } from '../common/children.ts';
import { load, loadClient } from './load.ts';

const here = import.meta.dirname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const server = await child<{
  url: string;
  email: string;
  password: string;
  keys: Array<{ kid: string; public_jwk: Record<string, unknown> }>;
  concurrency: number;
  database: string;
}>(join(here, 'server.ts'));
const { url, email, password } = server.msg;
const loginBody = JSON.stringify({ email, password });
const loginRes = await fetch(`${url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: loginBody,
});
const token = ((await loginRes.json()) as { access_token: string }).access_token;
const auth = { authorization: `Bearer ${token}` };
const meUrl = `${url}/api/v1/auth/me`;

await load({ url: meUrl, seconds: 2, connections: CONNECTIONS, headers: auth }); // warm-up
const me = await load({ url: meUrl, seconds: SECONDS, connections: CONNECTIONS, headers: auth });
const health = await load({ url: `${url}/healthz`, seconds: SECONDS, connections: CONNECTIONS });
const meQuiet = await load({ url: meUrl, seconds: 3, connections: 1, headers: auth });
const [logins, meDuringFlood] = await Promise.all([
  load({
    url: `${url}/api/v1/auth/login`,
    seconds: SECONDS,
    connections: 16,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: loginBody,
  }),
  load({ url: meUrl, seconds: SECONDS, connections: 1, headers: auth }),
]);

const kid = decodeProtectedHeader(token).kid;
const jwk = server.msg.keys.find((k) => k.kid === kid)?.public_jwk;
if (!jwk) throw new Error('signing key of the token not reported by the server');
await stopChild(server.proc);

// Baselines, measured now, on the same machine, with the server stopped.
const hello = await child<{ url: string }>(join(here, 'hello.ts'));
await load({ url: hello.msg.url, seconds: 2, connections: CONNECTIONS });
const bare = await load({ url: hello.msg.url, seconds: SECONDS, connections: CONNECTIONS });
await stopChild(hello.proc);
const verify = (
  await child<{ jose: number; ours: number }>(join(here, 'verify-loop.ts'), { args: [JSON.stringify({ token, jwk, seconds: SECONDS })] })
).msg;
// Issue 12.7's per-request check against the bare token check it adds to, alternating rounds in one process.
const authzChild = await child<{ before: number; after: number }>(join(here, 'authorize-loop.ts'));
const authz = authzChild.msg;
await stopChild(authzChild.proc);

const n = (x: number) => Math.round(x).toLocaleString('en-US');
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — auth, ${server.msg.database}`,
  '',
  `Machine: ${cpus()[0]?.model ?? 'cpu'} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. ` +
    `Load: ${loadClient}, ${SECONDS} s per figure, ${CONNECTIONS} connections unless noted, on the same machine as the server.`,
  '',
  '| measure | figure |',
  '|---|---|',
  `| logins/s (Argon2id m=19 MiB t=2 p=1; ${server.msg.concurrency} hashing slot(s); 16 connections) | ${n(logins.rps)} (p50 ${logins.p50} ms; errors ${logins.errors}) |`,
  `| GET /api/v1/auth/me req/s | ${n(me.rps)} (p50 ${me.p50} ms, p99 ${me.p99} ms; errors ${me.errors}) |`,
  `| GET /healthz req/s (our app without auth or database) | ${n(health.rps)} |`,
  `| baseline: bare node:http hello-world req/s | ${n(bare.rps)} |`,
  `| baseline: bare JWT verifies/s, jose jwtVerify, same key, one core | ${n(verify.jose)} |`,
  `| baseline: bare JWT verifies/s, the server's verifier (node:crypto), same key, one core | ${n(verify.ours)} |`,
  `| /auth/me ÷ jose verify loop (target ≥ 0.60) | ${(me.rps / verify.jose).toFixed(2)} |`,
  `| /auth/me ÷ the server's own verify loop | ${(me.rps / verify.ours).toFixed(2)} |`,
  `| per request, one core: authorize against the admin as they are now (12.7) / baseline: the bare token check | ${n(authz.after)} / ${n(authz.before)} per s (${(authz.after / authz.before).toFixed(2)}) |`,
  `| /auth/me, 1 connection, quiet: p50 / p99 | ${meQuiet.p50} / ${meQuiet.p99} ms |`,
  `| /auth/me, 1 connection, during the login flood: p50 / p99 | ${meDuringFlood.p50} / ${meDuringFlood.p99} ms (${n(meDuringFlood.rps)} req/s) |`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(0);
