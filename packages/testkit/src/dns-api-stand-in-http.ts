import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DnsProviderPort } from '@svc/domain';
import { dnsProviderPort } from '@svc/providers';
import type { BindServer } from './bind-server.ts';
import { testOutbound } from './outbound.ts';

/** What the hosted DNS API stand-ins share: the HTTP server, the requests they log, and the zone they front. */

/** An answer a test makes a stand-in give instead of the real one (a broken or hostile provider). */
export interface RawAnswer {
  status: number;
  body: string | Buffer;
  contentType?: string;
}

export interface DnsApiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface DnsApiStandIn {
  /** The origin to give the adapter as apiBase. */
  base: string;
  zone: string;
  /** What the API reports as the zone's name servers. */
  nameservers: string[];
  requests: DnsApiRequest[];
  /** From now on every request gets `answer` (null: the real answers again). */
  answerWith(answer: RawAnswer | null): void;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  json?: unknown;
  xml?: string;
}

export type Route = (req: DnsApiRequest, url: URL) => Promise<Reply>;

export async function serveApi(route: Route): Promise<Omit<DnsApiStandIn, 'zone' | 'nameservers'>> {
  const requests: DnsApiRequest[] = [];
  let raw: RawAnswer | null = null;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rec: DnsApiRequest = {
      method: req.method ?? '',
      path: req.url ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(rec);
    if (raw) {
      res.writeHead(raw.status, { 'content-type': raw.contentType ?? 'application/json' });
      res.end(raw.body);
      return;
    }
    let reply: Reply;
    try {
      reply = await route(rec, new URL(rec.path, 'http://stand-in'));
    } catch (err) {
      reply = { status: 500, json: { stand_in_error: String((err as Error).message) } };
    }
    const xml = reply.xml !== undefined;
    res.writeHead(reply.status, { 'content-type': xml ? 'text/xml' : 'application/json' });
    res.end(xml ? reply.xml : reply.status === 204 ? undefined : JSON.stringify(reply.json ?? null));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answerWith: (a) => {
      raw = a;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Our RFC 2136 adapter at the BIND behind a stand-in. */
export const bindAt = (bind: BindServer): DnsProviderPort =>
  dnsProviderPort(
    'rfc2136',
    { server: '127.0.0.1', port: String(bind.port), key_name: bind.keyName, key_secret: bind.secret, zone: bind.zone },
    { now: () => new Date(), outbound: testOutbound() },
  );

export const sameSecret = (given: string | undefined, want: string) =>
  given !== undefined && given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));

export const inZone = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);
export const nameserversOf = (zone: string) => [`ns1.${zone}`, `ns2.${zone}`];
export const unquoted = (s: string) => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);
