import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EnrollRequest } from '@svc/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The gateway's precompiled start (infra/bundle-app.mjs, `build` of @svc/control-plane): one
// ES module run by plain node, without tsx. Built here into a directory of its own inside the
// app (externals resolve from the app's node_modules as from dist/), started on an embedded
// database (the PGlite worker thread's file must sit beside the bundle, and @electric-sql/pglite
// resolve from there), and asked over gRPC on the gateway's own listener (grpc-server.ts loads
// nice-grpc's handlers from its package): an Enroll with an unknown token comes back
// UNAUTHENTICATED, the status our code gives it.

const APP = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = `dist/.test-${process.pid}`;
let child: ChildProcess | undefined;
let dataDir: string;
let port: number;
let log: string[] = [];

beforeAll(async () => {
  execFileSync(process.execPath, [resolve(APP, '../../infra/bundle-app.mjs'), 'src/main.ts', OUT], { cwd: APP, stdio: 'pipe' });
  dataDir = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
  child = spawn(process.execPath, [join(APP, OUT, 'main.js')], {
    cwd: tmpdir(),
    env: {
      PATH: process.env.PATH ?? '',
      SVC_DATA_DIR: dataDir,
      SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
      SVC_GRPC_HOST: '127.0.0.1',
      SVC_GRPC_PORT: '0',
      SVC_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (b: Buffer) => log.push(b.toString()));
  port = await new Promise<number>((ok, fail) => {
    child?.once('exit', (code) => fail(new Error(`the bundle exited (${code}):\n${log.join('\n')}`)));
    createInterface({ input: child?.stdout as NodeJS.ReadableStream }).on('line', (l) => {
      log.push(l);
      if (l.includes('agent gateway listening')) ok(JSON.parse(l).grpc_port as number);
    });
  });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(join(APP, OUT), { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  log = [];
});

/** One unary gRPC call over HTTP/2 (the gateway's CA is not at hand: the server certificate is not checked); its grpc-status. */
function grpcStatus(path: string, message: Uint8Array): Promise<string | undefined> {
  return new Promise((ok, fail) => {
    const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    session.on('error', fail);
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    let status: string | undefined;
    req.on('response', (h) => {
      if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
    });
    req.on('trailers', (t) => {
      status = String(t['grpc-status']);
    });
    req.on('data', () => {});
    req.on('end', () => {
      session.close();
      ok(status);
    });
    req.on('error', fail);
    req.end(frame);
  });
}

describe('the gateway bundle (node dist/main.js, no tsx)', () => {
  it('starts on an embedded database and answers gRPC with our status codes', async () => {
    const message = EnrollRequest.encode({ token: 'not-a-token', csrPem: 'x', hostname: 'h', agentVersion: '1' } as EnrollRequest).finish();
    // 16: UNAUTHENTICATED.
    expect(await grpcStatus('/svc.controlplane.v1.ControlPlane/Enroll', message)).toBe('16');
    expect(log.join('\n')).toContain('migrations applied');
  });
});
