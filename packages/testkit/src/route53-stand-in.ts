import { randomBytes, randomUUID } from 'node:crypto';
import { ROUTE53_XMLNS, route53TxtDecode, sigV4, xmlElements, xmlEscape, xmlText, xmlUnescape } from '@svc/providers';
import type { BindServer } from './bind-server.ts';
import {
  bindAt,
  type DnsApiRequest,
  type DnsApiStandIn,
  nameserversOf,
  type Reply,
  type Route,
  serveApi,
} from './dns-api-stand-in-http.ts';

/** A local stand-in for Route 53's API 2013-04-01 (the subset the adapter calls), fronting a real BIND zone (dns-api-stand-ins.ts). */

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
