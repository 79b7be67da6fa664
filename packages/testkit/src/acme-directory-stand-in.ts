import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { caSignedCertificate } from './certificates.ts';

/**
 * Hostile and broken ACME directories on 127.0.0.1, for the outbound policy's tests: an HTTPS
 * listener (a CA of its own, `caPem`; names localhost and 127.0.0.1) and a plain-http one whose
 * requests are counted (`httpSeen`), so a test proves no request reached an http URL. Each
 * directory lives under a path of its own:
 * - `/http-nonce/directory`: names newNonce at the http listener;
 * - `/redirect-to-http/directory`: 302 to a directory on the http listener;
 * - `/nonce-redirects/directory`: an https newNonce that answers 302 to the http listener;
 * - `/cross-origin/directory`: 302 to the same listener by another name (127.0.0.1: another origin);
 * - `/tarpit/directory`: a valid directory whose newNonce accepts the request and never answers
 *   (the CA that held the registration queue and both issuance slots until a restart);
 * - `/silent/directory`: never answers at all.
 */
export interface AcmeDirectoryStandIn {
  /** `https://localhost:<port>` */
  base: string;
  port: number;
  caPem: string;
  /** "METHOD /path" of each request the HTTPS listener answered or held. */
  seen: string[];
  /** `http://127.0.0.1:<port>` */
  httpBase: string;
  /** "METHOD /path" of each request that reached the http listener. */
  httpSeen: string[];
  close(): Promise<void>;
}

export async function startAcmeDirectoryStandIn(): Promise<AcmeDirectoryStandIn> {
  const tls = caSignedCertificate('localhost', 2, ['127.0.0.1']);
  const seen: string[] = [];
  const httpSeen: string[] = [];
  const held = new Set<Socket>();
  const http = createHttpServer((req, res) => {
    httpSeen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'replay-nonce': 'http-nonce', 'content-type': 'application/json' }).end(directory(httpBase, ''));
  });
  const https = createHttpsServer({ cert: tls.cert_pem, key: tls.key_pem }, (req, res) => route(req, res));
  for (const server of [http, https]) server.on('connection', (socket: Socket) => held.add(socket));
  await Promise.all([http, https].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
  const port = (https.address() as AddressInfo).port;
  const base = `https://localhost:${port}`;
  const httpBase = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const directory = (origin: string, prefix: string, nonce = `${origin}${prefix}/nonce`) =>
    JSON.stringify({
      newNonce: nonce,
      newAccount: `${origin}${prefix}/new-account`,
      newOrder: `${origin}${prefix}/new-order`,
      revokeCert: `${origin}${prefix}/revoke`,
      keyChange: `${origin}${prefix}/key-change`,
    });
  const json = (res: ServerResponse, body: string): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  };
  const redirect = (res: ServerResponse, to: string): void => {
    res.writeHead(302, { location: to }).end();
  };

  const hold = (): void => {}; // accepted, never answered
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/http-nonce/directory': (res) => json(res, directory(base, '/http-nonce', `${httpBase}/nonce`)),
    '/redirect-to-http/directory': (res) => redirect(res, `${httpBase}/directory`),
    '/nonce-redirects/directory': (res) => json(res, directory(base, '/nonce-redirects')),
    '/nonce-redirects/nonce': (res) => redirect(res, `${httpBase}/nonce`),
    '/cross-origin/directory': (res) => redirect(res, `https://127.0.0.1:${port}/http-nonce/directory`),
    '/tarpit/directory': (res) => json(res, directory(base, '/tarpit')),
    '/tarpit/nonce': hold,
    '/silent/directory': hold,
  };
  function route(req: IncomingMessage, res: ServerResponse): void {
    seen.push(`${req.method} ${req.url}`);
    const answer = routes[req.url ?? ''];
    if (answer) answer(res);
    else res.writeHead(404).end();
  }

  return {
    base,
    port,
    caPem: tls.ca,
    seen,
    httpBase,
    httpSeen,
    close: async () => {
      for (const socket of held) socket.destroy();
      await Promise.all([http, https].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
