import { randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Both ends of a transfer through a proxy chain in end-to-end tests: a local HTTP server that
 * answers every request with the same random payload (the destination), and a plain HTTP
 * request sent to an HTTP proxy (e.g. a v2ray client's `http` inbound), which reports what came
 * back or how the connection failed instead of throwing.
 */

export interface PayloadServer {
  /** http://127.0.0.1:<port>/ */
  url: string;
  payload: Buffer;
  close(): Promise<void>;
}

export async function startPayloadServer(size: number): Promise<PayloadServer> {
  const payload = randomBytes(size);
  const server = createServer((req, res) => {
    // Answer once the upload is read (and dropped): closing a socket with unread bytes resets it,
    // which would cut the answer short.
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': payload.length });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    payload,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type ProxiedResponse = { ok: true; status: number; body: Buffer } | { ok: false; reason: string };

export interface ProxiedRequestOptions {
  /**
   * POST this many random bytes (default 0: a GET). A VMess server that does not know the user
   * answers nothing and reads ~3.4 KB before it closes (anti-probing), so a request that sends
   * more (e.g. 8 KiB) is refused by a closed connection instead of hanging.
   */
  uploadBytes?: number;
  /** Give up on a silent proxy after this long; default 20 s. */
  timeoutMs?: number;
}

/**
 * Requests `url` through the HTTP proxy at 127.0.0.1:proxyPort, on a connection of its own
 * (`Connection: close`). A refused, reset or silent proxy gives `ok: false` with the reason;
 * any HTTP answer, even an error status, gives `ok: true`.
 */
export function requestThroughProxy(proxyPort: number, url: string, opts: ProxiedRequestOptions = {}): Promise<ProxiedResponse> {
  const { uploadBytes = 0, timeoutMs = 20_000 } = opts;
  return new Promise((resolve) => {
    const { host } = new URL(url);
    const body = uploadBytes > 0 ? randomBytes(uploadBytes) : undefined;
    const req = request({
      host: '127.0.0.1',
      port: proxyPort,
      method: body ? 'POST' : 'GET',
      path: url,
      headers: { host, connection: 'close', ...(body ? { 'content-length': body.length } : {}) },
      agent: false,
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', (err) => resolve({ ok: false, reason: err.message }));
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('error', (err) => resolve({ ok: false, reason: err.message }));
      res.once('end', () => resolve({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.end(body);
  });
}
