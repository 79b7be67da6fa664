// `pnpm bench:enroll-flood` (issue 12.5): the agent gateway in a child process (all-in-one
// runtime over PGlite) while BENCH_FLOOD_CALLS (default 8) Enroll calls of BENCH_FLOOD_MB
// (default 60) MB each, without a client certificate, are thrown at it at once, each on its
// own TLS connection (raw HTTP/2: one prepared gRPC frame written to every stream, so the
// sender's memory does not grow with the calls). Measured on the gateway: RSS idle, peak RSS
// (VmHWM) during the flood, RSS after; how long until every call had its status; the statuses;
// whether a normal call is still answered. Twice in one run: the baseline with the receive
// limits as they were (64 MiB for every method), then the gateway as it is (Enroll 16 KiB).
import type { ChildProcess } from 'node:child_process';
import http2 from 'node:http2';
import { join } from 'node:path';
import { EnrollRequest } from '@svc/proto';
import { child, stopChild } from '../common/children.ts';
import { peakRssBytes, rssBytes } from '../common/proc.ts';
import { BENCH_DIR, env, loadNow, log, machine, main, mib, publish, quietMachine, revision, sleep, track } from '../common/run.ts';

const CALLS = env('BENCH_FLOOD_CALLS', 8);
const MB = env('BENCH_FLOOD_MB', 60);
const ENROLL = '/svc.controlplane.v1.ControlPlane/Enroll';

/** One gRPC frame: flag 0, length, an EnrollRequest whose hostname is `bytes` long. */
function enrollFrame(bytes: number): Buffer {
  const msg = Buffer.from(
    EnrollRequest.encode({ token: 'x'.repeat(43), csrPem: '', hostname: 'h'.repeat(bytes), agentVersion: '1' }).finish(),
  );
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}

/** One Enroll over its own TLS connection without a client certificate; resolves with the grpc-status name. */
function call(port: number, caCertPem: string, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const session = http2.connect(`https://localhost:${port}`, { ca: caCertPem });
    const done = (status: string) => {
      resolve(status);
      session.destroy();
    };
    session.on('error', (err) => done(`connection error: ${err.message}`));
    const req = session.request({ ':method': 'POST', ':path': ENROLL, 'content-type': 'application/grpc', te: 'trailers' });
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) done(STATUS[Number(h['grpc-status'])] ?? String(h['grpc-status']));
    };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', () => {});
    req.on('error', () => {});
    // A sender that keeps pushing after the status can lose it: Node's HTTP/2 server resets the
    // stream (ENHANCE_YOUR_CALM) for DATA on a stream it closed, and the client reports the reset.
    req.on('close', () => done(`reset by the gateway before the status was read (HTTP/2 code ${req.rstCode})`));
    req.end(body);
  });
}

const STATUS = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

interface Figures {
  idle: number;
  peak: number;
  after: number;
  ms: number;
  statuses: Record<string, number>;
  alive: string;
}

async function flood(label: string, baseline: boolean, frame: Buffer, small: Buffer): Promise<Figures> {
  const { proc, msg } = await child<{ port: number; caCertPem: string }>(join(BENCH_DIR, 'enroll-flood', 'server.ts'), {
    env: { BENCH_BASELINE: baseline ? '1' : '0' },
  });
  track(proc);
  const pid = proc.pid as number;
  try {
    // Warm up: TLS, HTTP/2 and the handler's code paths; then let the heap settle.
    for (let i = 0; i < 3; i++) await call(msg.port, msg.caCertPem, small);
    await sleep(2000);
    const idle = rssBytes(pid);
    let peak = peakRssBytes(pid);
    log(`${label}: ${CALLS} × ${MB} MB Enroll at once (gateway RSS idle ${mib(idle)} MiB)`);
    const t0 = performance.now();
    const statuses = await Promise.all(Array.from({ length: CALLS }, () => call(msg.port, msg.caCertPem, frame)));
    const ms = performance.now() - t0;
    peak = Math.max(peak, peakRssBytes(pid));
    await sleep(2000);
    const after = rssBytes(pid);
    const alive = await call(msg.port, msg.caCertPem, small);
    const counts: Record<string, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    log(
      `${label}: peak ${mib(peak)} MiB, after ${mib(after)} MiB, ${Math.round(ms)} ms, ${JSON.stringify(counts)}; a normal call then: ${alive}`,
    );
    return { idle, peak, after, ms, statuses: counts, alive };
  } finally {
    await stopChild(proc as ChildProcess).catch(() => {});
  }
}

await main(async () => {
  const loadBefore = await quietMachine();
  const frame = enrollFrame(MB * 1_000_000);
  // A normal-sized Enroll (an unknown token): UNAUTHENTICATED when the gateway is serving.
  const small = enrollFrame(10);
  const before = await flood('baseline (64 MiB for every method)', true, frame, small);
  const after = await flood('hardened (Enroll 16 KiB)', false, frame, small);
  const row = (what: string, f: (x: Figures) => string) => `| ${what} | ${f(before)} | ${f(after)} |`;
  const statuses = (x: Figures) =>
    Object.entries(x.statuses)
      .map(([k, v]) => `${v} × ${k}`)
      .join(', ');
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — enroll flood, ${CALLS} × ${MB} MB Enroll without a client certificate`,
    '',
    `Machine: ${machine()}. Commit ${revision()}. Load average (1/5/15 min) before: ${loadBefore}; after: ${loadNow()}. The gateway over PGlite (most of the idle RSS) in a child process, enroll rate limits lifted; each call on its own TLS connection (raw HTTP/2), all at once.`,
    '',
    '| measure | baseline: 64 MiB limit for every method (as it was) | Enroll limit 16 KiB (now) |',
    '|---|---|---|',
    row('gateway RSS idle (MiB)', (x) => mib(x.idle)),
    row('gateway peak RSS during the flood (VmHWM, MiB)', (x) => mib(x.peak)),
    row('peak − idle (MiB)', (x) => mib(x.peak - x.idle)),
    row('gateway RSS 2 s after (MiB)', (x) => mib(x.after)),
    row('until every call had its status (ms)', (x) => String(Math.round(x.ms))),
    row('statuses', statuses),
    row('a normal Enroll afterwards (an unknown token)', (x) => x.alive),
  ]);
});
