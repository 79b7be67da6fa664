import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DnsProviderPort } from '@svc/domain';
import { dnsProviderPort, ROUTE53_XMLNS, route53TxtDecode, sigV4, xmlElements, xmlEscape, xmlText, xmlUnescape } from '@svc/providers';
import type { BindServer } from './bind-server.ts';
import { testOutbound } from './outbound.ts';

/**
 * Local stand-ins for the hosted DNS APIs DNS-01 uses (Cloudflare v4, Route 53 2013-04-01,
 * DigitalOcean v2), the subset our adapters call, answering as the providers document: their
 * envelopes, errors and authentication, Cloudflare's and DigitalOcean's one record per value,
 * Route 53's one set per name changed by atomic change batches. Each serves one zone held by a
 * real BIND (startBind) and applies every TXT change to it through our RFC 2136 adapter, so what
 * the adapters say is visible is asked of a real name server. The zone's name servers are
 * reported as `ns1.<zone>` and `ns2.<zone>`: the tests resolve them to 127.0.0.1 and ask BIND's
 * port (or send one elsewhere, to see that every name server must answer).
 */

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

interface Reply {
  status: number;
  json?: unknown;
  xml?: string;
}

type Route = (req: DnsApiRequest, url: URL) => Promise<Reply>;

async function serveApi(route: Route): Promise<Omit<DnsApiStandIn, 'zone' | 'nameservers'>> {
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
const bindAt = (bind: BindServer): DnsProviderPort =>
  dnsProviderPort(
    'rfc2136',
    { server: '127.0.0.1', port: String(bind.port), key_name: bind.keyName, key_secret: bind.secret, zone: bind.zone },
    { now: () => new Date(), outbound: testOutbound() },
  );

const sameSecret = (given: string | undefined, want: string) =>
  given !== undefined && given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));

const inZone = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);
const nameserversOf = (zone: string) => [`ns1.${zone}`, `ns2.${zone}`];
const unquoted = (s: string) => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);

// ---------------------------------------------------------------------------------------------
// Cloudflare

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

// ---------------------------------------------------------------------------------------------
// DigitalOcean

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

// ---------------------------------------------------------------------------------------------
// Route 53

export interface Route53StandIn extends DnsApiStandIn {
  /** The public hosted zone of the BIND zone (a private zone of the same name comes first in lists). */
  zoneId: string;
  /**
   * Another writer: right after the next read of the TXT set at a name (before the reader can
   * write), `value` is added to that set. The reader's compare-and-swap then fails once.
   */
  raceAfterNextRead(value: string): void;
  /** The TXT values at `name` as Route 53 holds them (quoted). */
  txtSet(name: string): string[] | undefined;
}

interface RecordSet {
  name: string;
  type: string;
  ttl: number;
  values: string[];
}

interface HostedZone {
  id: string;
  name: string;
  private: boolean;
  sets: Map<string, RecordSet>;
}

const abs = (name: string) => (name.endsWith('.') ? name : `${name}.`).toLowerCase();
/** Route 53 lists names with their labels reversed (com.example.www): the order of its lists. */
const reversed = (name: string) => abs(name).slice(0, -1).split('.').reverse().join('.');
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export async function startRoute53StandIn(
  bind: BindServer,
  opts: { accessKeyId: string; secretAccessKey: string },
): Promise<Route53StandIn> {
  const nameservers = nameserversOf(bind.zone);
  const apex = abs(bind.zone);
  const setsOf = (...sets: RecordSet[]) => new Map(sets.map((s) => [`${s.name}|${s.type}`, s]));
  const ownSets = () =>
    setsOf(
      { name: apex, type: 'NS', ttl: 172800, values: nameservers.map(abs) },
      { name: apex, type: 'SOA', ttl: 900, values: [`${abs(nameservers[0] as string)} hostmaster.${apex} 1 7200 900 1209600 86400`] },
    );
  const pub: HostedZone = { id: `Z9${randomBytes(8).toString('hex').toUpperCase()}`, name: apex, private: false, sets: ownSets() };
  // Split horizon: a private zone of the same name, listed first (its id sorts first).
  const priv: HostedZone = { id: `Z0${randomBytes(8).toString('hex').toUpperCase()}`, name: apex, private: true, sets: ownSets() };
  const zones = [priv, pub];
  const dns = bindAt(bind);
  let race: string | null = null;

  const xml = (status: number, body: string): Reply => ({ status, xml: `<?xml version="1.0"?>\n${body}` });
  const error = (status: number, code: string, message: string) =>
    xml(
      status,
      `<ErrorResponse xmlns="${ROUTE53_XMLNS}"><Error><Type>Sender</Type><Code>${code}</Code>` +
        `<Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
    );
  const invalidBatch = (messages: string[]) =>
    xml(
      400,
      `<InvalidChangeBatch xmlns="${ROUTE53_XMLNS}"><Messages>${messages.map((m) => `<Message>${xmlEscape(m)}</Message>`).join('')}` +
        `</Messages><RequestId>${randomUUID()}</RequestId></InvalidChangeBatch>`,
    );
  const zoneXml = (z: HostedZone) =>
    `<HostedZone><Id>/hostedzone/${z.id}</Id><Name>${z.name}</Name><CallerReference>${z.id}</CallerReference>` +
    `<Config><PrivateZone>${z.private}</PrivateZone></Config><ResourceRecordSetCount>${z.sets.size}</ResourceRecordSetCount></HostedZone>`;
  const setXml = (s: RecordSet) =>
    `<ResourceRecordSet><Name>${xmlEscape(s.name)}</Name><Type>${s.type}</Type><TTL>${s.ttl}</TTL><ResourceRecords>` +
    `${s.values.map((v) => `<ResourceRecord><Value>${xmlEscape(v)}</Value></ResourceRecord>`).join('')}</ResourceRecords></ResourceRecordSet>`;

  /** The SigV4 Authorization header: well formed, our key, scoped to us-east-1/route53, and the signature of this very request. */
  const authError = (req: DnsApiRequest, url: URL): Reply | null => {
    const auth = String(req.headers.authorization ?? '');
    const m =
      /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return error(403, 'MissingAuthenticationToken', 'Missing Authentication Token');
    const [, keyId, day, region, service, signed, signature] = m as unknown as string[];
    const date = String(req.headers['x-amz-date'] ?? '');
    if (!/^\d{8}T\d{6}Z$/.test(date) || date.slice(0, 8) !== day)
      return error(400, 'IncompleteSignature', 'Date must be in ISO-8601 basic format and match the credential scope.');
    if (keyId !== opts.accessKeyId) return error(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
    if (region !== 'us-east-1' || service !== 'route53')
      return error(403, 'SignatureDoesNotMatch', `Credential should be scoped to a valid region and service, not '${region}/${service}'.`);
    const names = (signed as string).split(';');
    if (!names.includes('host') || !names.includes('x-amz-date'))
      return error(403, 'SignatureDoesNotMatch', 'Host and x-amz-date must be signed.');
    const headers = Object.fromEntries(names.map((n) => [n, String(req.headers[n] ?? '')]));
    const key = { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey, region: 'us-east-1', service: 'route53' };
    const expected = sigV4({ method: req.method, url, headers, body: req.body }, key).signature;
    if (expected !== signature)
      return error(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
      );
    return null;
  };

  /** A change batch applied all or nothing, as Route 53 does; the TXT differences then go to BIND. */
  const changeBatch = async (z: HostedZone, body: string): Promise<Reply> => {
    const next = new Map(z.sets);
    const problems: string[] = [];
    const touched = new Set<string>();
    for (const c of xmlElements(body, 'Change')) {
      const action = xmlText(c, 'Action');
      const s: RecordSet = {
        name: abs(xmlText(c, 'Name') ?? ''),
        type: xmlText(c, 'Type') ?? '',
        ttl: Number(xmlText(c, 'TTL')),
        values: xmlElements(c, 'Value').map(xmlUnescape),
      };
      const k = `${s.name}|${s.type}`;
      const current = next.get(k);
      const what = `resource record set [name='${s.name}', type='${s.type}']`;
      if (!s.name.endsWith(`.${z.name}`) && s.name !== z.name)
        problems.push(`RRSet with DNS name ${s.name} is not permitted in zone ${z.name}`);
      else if (s.values.length === 0 || !Number.isInteger(s.ttl)) problems.push(`Invalid request: ${what} needs a TTL and values`);
      else if (action === 'DELETE') {
        if (!current) problems.push(`Tried to delete ${what} but it was not found`);
        else if (current.ttl !== s.ttl || [...current.values].sort().join('\n') !== [...s.values].sort().join('\n'))
          problems.push(`Tried to delete ${what} but the values provided do not match the current values`);
        else next.delete(k);
      } else if (action === 'CREATE') {
        if (current) problems.push(`Tried to create ${what} but it already exists`);
        else next.set(k, s);
      } else if (action === 'UPSERT') next.set(k, s);
      else problems.push(`Invalid action ${action}`);
      if (s.type === 'TXT') touched.add(k);
    }
    if (problems.length > 0) return invalidBatch(problems);
    const before = z.sets;
    z.sets = next;
    if (!z.private) {
      for (const k of touched) {
        const name = k.slice(0, k.indexOf('|') - 1);
        const was = (before.get(k)?.values ?? []).map(route53TxtDecode);
        const now = (next.get(k)?.values ?? []).map(route53TxtDecode);
        for (const v of now.filter((v) => !was.includes(v))) await dns.addTxt(name, v);
        for (const v of was.filter((v) => !now.includes(v))) await dns.removeTxt(name, v);
      }
    }
    return xml(
      200,
      `<ChangeResourceRecordSetsResponse xmlns="${ROUTE53_XMLNS}"><ChangeInfo><Id>/change/C${randomBytes(8).toString('hex').toUpperCase()}</Id>` +
        `<Status>PENDING</Status><SubmittedAt>${new Date().toISOString()}</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>`,
    );
  };

  const route: Route = async (req, url) => {
    const refused = authError(req, url);
    if (refused) return refused;
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== '2013-04-01') return error(404, 'UnknownOperationException', 'Unknown operation');
    if (parts[1] === 'hostedzonesbyname' && req.method === 'GET') {
      const dnsname = url.searchParams.get('dnsname') ?? '';
      const max = Number(url.searchParams.get('maxitems') ?? '100');
      const listed = [...zones]
        .sort((a, b) => cmp(reversed(a.name), reversed(b.name)) || cmp(a.id, b.id))
        .filter((z) => !dnsname || cmp(reversed(z.name), reversed(dnsname)) >= 0);
      return xml(
        200,
        `<ListHostedZonesByNameResponse xmlns="${ROUTE53_XMLNS}"><HostedZones>${listed.slice(0, max).map(zoneXml).join('')}</HostedZones>` +
          `<DNSName>${xmlEscape(dnsname)}</DNSName><IsTruncated>${listed.length > max}</IsTruncated><MaxItems>${max}</MaxItems></ListHostedZonesByNameResponse>`,
      );
    }
    const z = zones.find((x) => x.id === parts[2]);
    if (parts[1] !== 'hostedzone' || !z) return error(404, 'NoSuchHostedZone', `No hosted zone found with ID: ${parts[2] ?? ''}`);
    if (parts.length === 3 && req.method === 'GET') {
      const delegation = z.private
        ? ''
        : `<DelegationSet><NameServers>${nameservers.map((n) => `<NameServer>${n}</NameServer>`).join('')}</NameServers></DelegationSet>`;
      return xml(200, `<GetHostedZoneResponse xmlns="${ROUTE53_XMLNS}">${zoneXml(z)}${delegation}</GetHostedZoneResponse>`);
    }
    if (parts[3] === 'rrset' && req.method === 'GET') {
      const name = abs(url.searchParams.get('name') ?? z.name);
      const type = url.searchParams.get('type') ?? '';
      const max = Number(url.searchParams.get('maxitems') ?? '100');
      const listed = [...z.sets.values()]
        .sort((a, b) => cmp(reversed(a.name), reversed(b.name)) || cmp(a.type, b.type))
        .filter((s) => cmp(reversed(s.name), reversed(name)) > 0 || (s.name === name && cmp(s.type, type) >= 0));
      const answer = xml(
        200,
        `<ListResourceRecordSetsResponse xmlns="${ROUTE53_XMLNS}"><ResourceRecordSets>${listed.slice(0, max).map(setXml).join('')}` +
          `</ResourceRecordSets><IsTruncated>${listed.length > max}</IsTruncated><MaxItems>${max}</MaxItems></ListResourceRecordSetsResponse>`,
      );
      if (race !== null && type === 'TXT') {
        const value = race;
        race = null;
        await changeBatch(z, raceBatch(z.sets.get(`${name}|TXT`), name, value));
      }
      return answer;
    }
    if (parts[3] === 'rrset' && req.method === 'POST') return changeBatch(z, req.body);
    return error(404, 'UnknownOperationException', 'Unknown operation');
  };
  const api = await serveApi(route);
  return {
    ...api,
    zone: bind.zone,
    zoneId: pub.id,
    nameservers,
    raceAfterNextRead: (value) => {
      race = value;
    },
    txtSet: (name) => pub.sets.get(`${abs(name)}|TXT`)?.values,
  };
}

/** The batch another writer sends to add `value` to the set at `name` (as read by it, just now). */
function raceBatch(current: RecordSet | undefined, name: string, value: string): string {
  const set = (s: RecordSet) =>
    `<ResourceRecordSet><Name>${s.name}</Name><Type>TXT</Type><TTL>${s.ttl}</TTL><ResourceRecords>` +
    `${s.values.map((v) => `<ResourceRecord><Value>${xmlEscape(v)}</Value></ResourceRecord>`).join('')}</ResourceRecords></ResourceRecordSet>`;
  const del = current ? `<Change><Action>DELETE</Action>${set(current)}</Change>` : '';
  const values = [...(current?.values ?? []), `"${value}"`];
  return `<Changes>${del}<Change><Action>CREATE</Action>${set({ name, type: 'TXT', ttl: 60, values })}</Change></Changes>`;
}
