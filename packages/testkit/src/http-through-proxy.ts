import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The two ends of traffic in an end-to-end test: a plain HTTP request sent to an engine's HTTP
 * proxy inbound (absolute-form URL, as browsers send to a proxy), and a local HTTP server that
 * moves a known number of bytes each way and can hold a response open until the client leaves.
 */

export interface ProxiedResponse {
  status: number;
  body: string;
  /** Bytes of the response body as received. */
  bytes: number;
}

/** A request through the HTTP proxy on 127.0.0.1:proxyPort; rejects on a connection error or `signal`. */
export function httpRequestThroughProxy(
  proxyPort: number,
  url: string,
  opts: { method?: string; body?: Buffer | string; signal?: AbortSignal } = {},
): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: proxyPort,
        method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
        path: url,
        headers: { host: new URL(url).host, connection: 'close' },
        // A connection of its own: a pooled socket the proxy has just closed would fail the request.
        agent: false,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, body: body.toString('utf8'), bytes: body.length });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** GET `url` (absolute, e.g. the echo server's) through the HTTP proxy on 127.0.0.1:proxyPort. */
export const httpGetThroughProxy = (proxyPort: number, url: string, opts: { signal?: AbortSignal } = {}): Promise<ProxiedResponse> =>
  httpRequestThroughProxy(proxyPort, url, opts);

export interface ProxiedStream {
  /** Resolves once the response headers arrived (the stream is open end to end). */
  opened: Promise<{ status: number }>;
  /** Bytes received so far. */
  received(): number;
  /** Settles when the stream ends for any reason: how many bytes came, and whether it was cut (aborted or an error) rather than ended. */
  ended: Promise<{ bytes: number; cut: boolean }>;
  /** Leave, as a client that is done. */
  close(): void;
}

/** Opens a long response (the echo server's /stream) through the proxy and follows it. */
export function streamThroughProxy(proxyPort: number, url: string): ProxiedStream {
  let bytes = 0;
  let openedResolve!: (v: { status: number }) => void;
  let openedReject!: (e: Error) => void;
  const opened = new Promise<{ status: number }>((res, rej) => {
    openedResolve = res;
    openedReject = rej;
  });
  let endedResolve!: (v: { bytes: number; cut: boolean }) => void;
  const ended = new Promise<{ bytes: number; cut: boolean }>((res) => {
    endedResolve = res;
  });
  const target = { host: '127.0.0.1', port: proxyPort, method: 'GET', path: url, headers: { host: new URL(url).host }, agent: false };
  const req = request(target, (res) => {
    openedResolve({ status: res.statusCode ?? 0 });
    res.on('data', (c: Buffer) => {
      bytes += c.length;
    });
    res.on('end', () => endedResolve({ bytes, cut: !res.complete }));
    res.on('aborted', () => endedResolve({ bytes, cut: true }));
    res.on('error', () => endedResolve({ bytes, cut: true }));
    res.on('close', () => endedResolve({ bytes, cut: !res.complete }));
  });
  req.on('error', (err) => {
    openedReject(err);
    endedResolve({ bytes, cut: true });
  });
  req.end();
  // Nobody may be awaiting `opened` when the stream fails: the failure is reported by `ended`.
  opened.catch(() => {});
  return { opened, received: () => bytes, ended, close: () => req.destroy() };
}

export interface EchoServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Bytes of request bodies received so far (POST /sink). */
  receivedBytes(): number;
  /** /stream responses open right now. */
  openStreams(): number;
  /** Resolves once `count` /stream responses (since the server started) have ended because their client left. */
  streamsClosed(count?: number): Promise<void>;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');
const STREAM_CHUNK = Buffer.alloc(1024, 's');

/**
 * A local HTTP server on 127.0.0.1 (port 0 unless given):
 * - `GET /bytes/<n>`: a body of exactly n bytes (`x`);
 * - `POST /sink`: reads the body, answers `{"received": <bytes>}`;
 * - `GET /stream`: 1 KiB every 100 ms until the client leaves;
 * - `GET /`: `ok`.
 */
export async function startEchoServer(opts: { port?: number } = {}): Promise<EchoServer> {
  let received = 0;
  let open = 0;
  let closedCount = 0;
  const closeWaiters: Array<{ after: number; resolve: () => void }> = [];
  const wakeCloseWaiters = () => {
    for (const w of [...closeWaiters])
      if (closedCount >= w.after) {
        closeWaiters.splice(closeWaiters.indexOf(w), 1);
        w.resolve();
      }
  };

  const sendBytes = (res: ServerResponse, n: number) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
    let left = n;
    const pump = () => {
      while (left > 0) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        left -= piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  };

  const stream = (req: IncomingMessage, res: ServerResponse) => {
    open++;
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.flushHeaders();
    const timer = setInterval(() => res.write(STREAM_CHUNK), 100);
    req.socket.once('close', () => {
      clearInterval(timer);
      open--;
      closedCount++;
      wakeCloseWaiters();
    });
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://echo').pathname;
    const bytes = /^\/bytes\/(\d+)$/.exec(path);
    if (req.method === 'GET' && bytes) return sendBytes(res, Number(bytes[1]));
    if (req.method === 'GET' && path === '/stream') return stream(req, res);
    if (req.method === 'POST' && path === '/sink') {
      let n = 0;
      req.on('data', (c: Buffer) => {
        n += c.length;
        received += c.length;
      });
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: n })));
      return;
    }
    if (req.method === 'GET' && path === '/') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    receivedBytes: () => received,
    openStreams: () => open,
    streamsClosed: (count = 1) =>
      new Promise<void>((resolve) => {
        closeWaiters.push({ after: count, resolve });
        wakeCloseWaiters();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
