import type { BindServer } from './bind-server.ts';
import {
  bindAt,
  type DnsApiStandIn,
  nameserversOf,
  type Reply,
  type Route,
  sameSecret,
  serveApi,
  unquoted,
} from './dns-api-stand-in-http.ts';

/** A local stand-in for DigitalOcean's DNS API v2 (the subset the adapter calls), fronting a real BIND zone (dns-api-stand-ins.ts). */

export interface DigitalOceanStandIn extends DnsApiStandIn {
  /** A TXT record made by someone else, `name` relative to the domain. */
  seed(name: string, data: string): Promise<void>;
}

interface DoRecord {
  id: number;
  type: string;
  name: string;
  data: string;
  ttl: number;
  priority: null;
  port: null;
  weight: null;
  flags: null;
  tag: null;
}

export async function startDigitalOceanStandIn(bind: BindServer, opts: { token: string }): Promise<DigitalOceanStandIn> {
  const domain = bind.zone;
  const nameservers = nameserversOf(domain);
  const dns = bindAt(bind);
  let nextId = 3_000_000;
  const record = (type: string, name: string, data: string, ttl: number): DoRecord => ({
    id: nextId++,
    type,
    name,
    data,
    ttl,
    priority: null,
    port: null,
    weight: null,
    flags: null,
    tag: null,
  });
  const records = new Map<number, DoRecord>();
  for (const r of [record('SOA', '@', '1800', 1800), ...nameservers.map((ns) => record('NS', '@', ns, 1800))]) records.set(r.id, r);
  const fqdnOf = (name: string) => (name === '@' ? domain : `${name}.${domain}`);
  const fail = (status: number, id: string, message: string): Reply => ({ status, json: { id, message } });
  const create = async (name: string, data: string, ttl: number): Promise<DoRecord> => {
    const r = record('TXT', name, data, ttl);
    records.set(r.id, r);
    await dns.addTxt(fqdnOf(name), unquoted(data));
    return r;
  };

  const route: Route = async (req, url) => {
    if (!sameSecret(req.headers.authorization, `Bearer ${opts.token}`)) return fail(401, 'Unauthorized', 'Unable to authenticate you');
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'v2' || parts[1] !== 'domains' || parts[2] === undefined)
      return fail(404, 'not_found', 'The resource you requested could not be found.');
    if (decodeURIComponent(parts[2]) !== domain) return fail(404, 'not_found', 'The resource you were accessing could not be found.');
    if (parts.length === 3 && req.method === 'GET') return { status: 200, json: { domain: { name: domain, ttl: 1800, zone_file: '' } } };
    if (parts[3] !== 'records') return fail(404, 'not_found', 'The resource you requested could not be found.');
    if (parts.length === 4 && req.method === 'GET') {
      const type = url.searchParams.get('type');
      const name = url.searchParams.get('name');
      const found = [...records.values()].filter((r) => (!type || r.type === type) && (!name || fqdnOf(r.name) === name));
      return { status: 200, json: { domain_records: found, links: {}, meta: { total: found.length } } };
    }
    if (parts.length === 4 && req.method === 'POST') {
      const b = JSON.parse(req.body) as { type?: string; name?: string; data?: string; ttl?: number };
      if (b.type !== 'TXT') return fail(422, 'unprocessable_entity', 'This stand-in takes TXT records only.');
      if (typeof b.name !== 'string' || !/^(@|[a-z0-9_.-]+)$/i.test(b.name) || b.name.endsWith('.'))
        return fail(422, 'unprocessable_entity', 'Name is invalid.');
      if (typeof b.data !== 'string' || b.data.length === 0)
        return fail(422, 'unprocessable_entity', 'Data needs to be a valid TXT value.');
      if (b.ttl !== undefined && (typeof b.ttl !== 'number' || b.ttl < 30))
        return fail(422, 'unprocessable_entity', 'Ttl must be at least 30.');
      return { status: 201, json: { domain_record: await create(b.name.toLowerCase(), b.data, b.ttl ?? 1800) } };
    }
    const id = Number(parts[4]);
    if (parts.length === 5 && req.method === 'DELETE') {
      const r = records.get(id);
      if (!r) return fail(404, 'not_found', 'The resource you were accessing could not be found.');
      records.delete(id);
      // DigitalOcean takes duplicates; the value stays in DNS while another record holds it.
      if (![...records.values()].some((o) => o.type === 'TXT' && o.name === r.name && unquoted(o.data) === unquoted(r.data)))
        await dns.removeTxt(fqdnOf(r.name), unquoted(r.data));
      return { status: 204 };
    }
    return fail(405, 'method_not_allowed', 'Method not allowed.');
  };
  const api = await serveApi(route);
  return {
    ...api,
    zone: domain,
    nameservers,
    seed: async (name, data) => {
      await create(name, data, 300);
    },
  };
}
