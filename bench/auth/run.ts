// `pnpm bench:auth`: logins/s at the configured Argon2id parameters, /auth/me req/s, and in
// the same run the baselines: bare node:http hello-world req/s and bare JWT verifies/s.
// Also: /auth/me latency while a login flood runs (the flood must queue, not starve).
import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { decodeProtectedHeader } from 'jose';

const here = dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

function child<T>(file: string, args: string[] = []): Promise<{ proc: ChildProcess; msg: T }> {
  return new Promise((resolve, reject) => {
    const proc = fork(join(here, file), args, {
      execArgv: ['--import', 'tsx'],
      env: process.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    proc.once('message', (msg) => resolve({ proc, msg: msg as T }));
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

const stop = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    p.removeAllListeners('exit');
    p.once('exit', () => resolve());
    p.send('stop');
  });

async function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return autocannon({ duration: SECONDS, connections: CONNECTIONS, ...opts });
}

const server = await child<{
  url: string;
  email: string;
  password: string;
  keys: Array<{ kid: string; public_jwk: Record<string, unknown> }>;
  concurrency: number;
  database: string;
}>('server.ts');
const { url, email, password } = server.msg;
const loginBody = JSON.stringify({ email, password });
const loginRes = await fetch(`${url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: loginBody,
});
const token = ((await loginRes.json()) as { access_token: string }).access_token;

// 1. /auth/me
await cannon({ url: `${url}/api/v1/auth/me`, duration: 2, headers: { authorization: `Bearer ${token}` } }); // warm-up
const me = await cannon({ url: `${url}/api/v1/auth/me`, headers: { authorization: `Bearer ${token}` } });

// 2. logins/s (Argon2id bound), and /auth/me latency during that flood
const meQuiet = await cannon({ url: `${url}/api/v1/auth/me`, connections: 1, duration: 5, headers: { authorization: `Bearer ${token}` } });
const [logins, meDuringFlood] = await Promise.all([
  cannon({
    url: `${url}/api/v1/auth/login`,
    method: 'POST',
    connections: 16,
    headers: { 'content-type': 'application/json' },
    body: loginBody,
  }),
  cannon({ url: `${url}/api/v1/auth/me`, connections: 1, headers: { authorization: `Bearer ${token}` } }),
]);

const kid = decodeProtectedHeader(token).kid;
const jwk = server.msg.keys.find((k) => k.kid === kid)?.public_jwk;
if (!jwk) throw new Error('signing key of the token not reported by the server');
await stop(server.proc);

// Baselines, measured now, on the same machine.
const hello = await child<{ url: string }>('hello.ts');
await cannon({ url: hello.msg.url, duration: 2 });
const bare = await cannon({ url: hello.msg.url });
await stop(hello.proc);

const verify = await child<{ perSecond: number }>('verify-loop.ts', [JSON.stringify({ token, jwk, seconds: SECONDS })]);

const rps = (r: autocannon.Result) => Math.round(r.requests.average);
const ratio = rps(me) / verify.msg.perSecond;
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — ${cpus()[0]?.model ?? 'cpu'} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, database ${server.msg.database}`,
  '',
  `autocannon ${SECONDS}s per figure, ${CONNECTIONS} connections unless noted; server and load generator on the same machine.`,
  '',
  '| measure | figure |',
  '|---|---|',
  `| logins/s (Argon2id m=19 MiB t=2 p=1, ${server.msg.concurrency} hashing slot(s), 16 connections) | ${rps(logins)} (non-2xx: ${logins.non2xx}) |`,
  `| GET /api/v1/auth/me req/s | ${rps(me)} (p50 ${me.latency.p50} ms, p99 ${me.latency.p99} ms, non-2xx: ${me.non2xx}) |`,
  `| baseline: bare node:http hello-world req/s | ${rps(bare)} |`,
  `| baseline: bare EdDSA JWT verifies/s (jose, same key, one core) | ${Math.round(verify.msg.perSecond)} |`,
  `| /auth/me ÷ bare verify (target ≥ 0.60) | ${ratio.toFixed(2)} |`,
  `| /auth/me latency, 1 connection, quiet: p50 / p99 | ${meQuiet.latency.p50} / ${meQuiet.latency.p99} ms |`,
  `| /auth/me latency, 1 connection, during the login flood: p50 / p99 | ${meDuringFlood.latency.p50} / ${meDuringFlood.latency.p99} ms (${rps(meDuringFlood)} req/s) |`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(0);
