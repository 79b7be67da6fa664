import { connect, type Socket } from 'node:net';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// packages/http server.ts: an idle kept-alive connection is left for the client to close (65 s,
// above proxies' 60 s), so a request a client sends on a connection it holds is never met by the
// server closing it: Node's own 5 s made a POST through a proxy (or a test's fetch on a loaded
// machine) fail with "other side closed", done or not.

let s: TestServer;
beforeAll(async () => {
  s = await startAdminApi();
});
afterAll(() => s.stop());

/** Sends one request on `socket` and resolves with the answer's status line once its body is in. */
function ask(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(got);
      if (end !== -1 && length && got.length >= end + 4 + Number(length[1])) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(got.slice(0, got.indexOf('\r\n')));
      }
    };
    const onClose = () => reject(new Error(`the server closed the connection (got ${JSON.stringify(got.slice(0, 40))})`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

describe('kept-alive connections', () => {
  it('a connection idle for longer than Node’s default 5 s still takes the next request', async () => {
    const { port } = new URL(s.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    try {
      expect(await ask(socket, '/healthz')).toBe('HTTP/1.1 200 OK');
      await new Promise((r) => setTimeout(r, 6500));
      expect(socket.destroyed).toBe(false);
      expect(await ask(socket, '/healthz')).toBe('HTTP/1.1 200 OK');
    } finally {
      socket.destroy();
    }
  }, 20_000);

  it('the answer tells the client how long the server keeps an idle connection', async () => {
    const res = await fetch(`${s.url}/healthz`);
    await res.text();
    expect(res.headers.get('keep-alive')).toBe('timeout=65');
  });
});
