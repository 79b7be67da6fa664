import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for a provider's API (the only stand-in: the providers' servers are out
 * of reach here): records every request it gets and answers with the test's handler. A
 * handler that returns 'silent' never answers (the adapter's time limit is what ends the call).
 */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer = { status: number; json?: unknown; text?: string; html?: string } | 'silent';
export type Handler = (req: Recorded) => Answer | Promise<Answer>;

export interface StandIn {
  base: string;
  requests: Recorded[];
  handle(h: Handler): void;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

export async function startStandIn(prefix = ''): Promise<StandIn> {
  const requests: Recorded[] = [];
  let handler: Handler = () => ({ status: 404, json: { error: 'no handler' } });
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const rec: Recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: await readBody(req) };
    requests.push(rec);
    const answer = await handler(rec);
    if (answer === 'silent') return;
    const text = answer.html ?? answer.text ?? JSON.stringify(answer.json ?? null);
    const type = answer.html !== undefined ? 'text/html; charset=utf-8' : answer.text !== undefined ? 'text/plain' : 'application/json';
    res.writeHead(answer.status, { 'content-type': type });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  return {
    base,
    requests,
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An address where nothing listens (a stand-in that is down). */
export async function downAddress(prefix = ''): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}${prefix}`;
}
