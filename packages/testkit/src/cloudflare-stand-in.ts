import { randomBytes } from 'node:crypto';
import type { BindServer } from './bind-server.ts';
import {
  bindAt,
  type DnsApiStandIn,
  inZone,
  nameserversOf,
  type Reply,
  type Route,
  sameSecret,
  serveApi,
  unquoted,
} from './dns-api-stand-in-http.ts';

/** A local stand-in for Cloudflare's DNS API v4 (the subset the adapter calls), fronting a real BIND zone (dns-api-stand-ins.ts). */

export interface CloudflareStandIn extends DnsApiStandIn {
  zoneId: string;
  /** A TXT record made by someone else (another tool, the other challenge), `content` as given. */
  seed(name: string, content: string): Promise<void>;
}

interface CfRecord {
  id: string;
  zone_id: string;
  type: string;
  name: string;
  content: string;
  ttl: number;
}

export async function startCloudflareStandIn(bind: BindServer, opts: { token: string }): Promise<CloudflareStandIn> {
  const zone = { id: randomBytes(16).toString('hex'), name: bind.zone, status: 'active', name_servers: nameserversOf(bind.zone) };
  const records = new Map<string, CfRecord>();
  const dns = bindAt(bind);
  const ok = (result: unknown, extra: object = {}): Reply => ({
    status: 200,
    json: { success: true, errors: [], messages: [], result, ...extra },
  });
  const fail = (status: number, code: number, message: string): Reply => ({
    status,
    json: { success: false, errors: [{ code, message }], messages: [], result: null },
  });
  const create = async (name: string, content: string, ttl: number): Promise<CfRecord> => {
    const r: CfRecord = { id: randomBytes(16).toString('hex'), zone_id: zone.id, type: 'TXT', name, content, ttl };
    records.set(r.id, r);
    await dns.addTxt(name, unquoted(content));
    return r;
  };

  const route: Route = async (req, url) => {
    if (!sameSecret(req.headers.authorization, `Bearer ${opts.token}`)) return fail(403, 10000, 'Authentication error');
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'client' || parts[1] !== 'v4' || parts[2] !== 'zones') return fail(404, 7000, 'No route for that URI');
    if (parts.length === 3 && req.method === 'GET') {
      const found = url.searchParams.get('name') === zone.name ? [zone] : [];
      return ok(found, { result_info: { page: 1, per_page: 20, count: found.length, total_count: found.length } });
    }
    if (parts[3] !== zone.id || parts[4] !== 'dns_records')
      return fail(404, 7003, `Could not route to ${url.pathname}, perhaps your object identifier is invalid?`);
    const recordId = parts[5];
    if (recordId === undefined && req.method === 'GET') {
      const type = url.searchParams.get('type');
      const name = url.searchParams.get('name');
      const found = [...records.values()].filter((r) => (!type || r.type === type) && (!name || r.name === name));
      return ok(found, { result_info: { page: 1, per_page: 100, count: found.length, total_count: found.length } });
    }
    if (recordId === undefined && req.method === 'POST') {
      const b = JSON.parse(req.body) as { type?: string; name?: string; content?: string; ttl?: number };
      if (b.type !== 'TXT') return fail(400, 9004, 'This record type is not supported by this stand-in.');
      const name = String(b.name ?? '').toLowerCase();
      if (!inZone(name, zone.name)) return fail(400, 9007, `Content for name is not in the zone ${zone.name}.`);
      if (typeof b.content !== 'string' || b.content.length === 0) return fail(400, 9005, 'Content for TXT record is invalid.');
      if (typeof b.ttl !== 'number' || (b.ttl !== 1 && (b.ttl < 30 || b.ttl > 86400))) return fail(400, 9003, 'Invalid TTL.');
      const content = b.content;
      if ([...records.values()].some((r) => r.type === 'TXT' && r.name === name && unquoted(r.content) === unquoted(content)))
        return fail(400, 81058, 'An identical record already exists.');
      return ok(await create(name, content, b.ttl));
    }
    if (recordId !== undefined && req.method === 'DELETE') {
      const r = records.get(recordId);
      if (!r) return fail(404, 81044, 'Record does not exist.');
      records.delete(recordId);
      await dns.removeTxt(r.name, unquoted(r.content));
      return ok({ id: r.id });
    }
    return fail(405, 10405, 'Method not allowed for this route');
  };
  const api = await serveApi(route);
  return {
    ...api,
    zone: zone.name,
    zoneId: zone.id,
    nameservers: zone.name_servers,
    seed: async (name, content) => {
      await create(name, content, 120);
    },
  };
}
