import { setTimeout as sleep } from 'node:timers/promises';
import { CHALLENGE_TTL_SECONDS, type DnsProviderPort, UnavailableError } from '@svc/domain';
import { visibleAtNameservers } from './authoritative-visibility.ts';
import { callDnsApi, dnsName, findZone, type HostedDnsDeps, providerText, refusedBy, requiredCredential } from './hosted-dns-api.ts';
import {
  changeBatchXml,
  parseHostedZones,
  parseRecordSets,
  parseRoute53Error,
  type Route53Change,
  type Route53RecordSet,
  route53TxtDecode,
  route53TxtValue,
  xmlElements,
  xmlUnescape,
} from './route53-xml.ts';
import { type SigV4Key, sigV4Headers } from './sigv4.ts';

/**
 * DNS-01 through the Route 53 API (2013-04-01, XML, SigV4). Route 53 keeps one record set per
 * name and type holding every value, so adding or removing one value rewrites the set: read it,
 * then one change batch that DELETEs exactly what was read and CREATEs the new set. Route 53
 * applies a batch atomically and refuses it (InvalidChangeBatch) when the set is no longer what
 * was read, so two writers (the apex and the wildcard challenge of one name) cannot lose each
 * other's value: the loser reads again and retries.
 */

export const ROUTE53_API = 'https://route53.amazonaws.com';
const V = '/2013-04-01';
const PROVIDER = 'Route 53';
/** Read-modify-write attempts before giving up on a set other writers keep changing. */
export const ROUTE53_CHANGE_ATTEMPTS = 5;
/** Refusals that mean "the set changed under us" or "not now": worth another read and write. */
const RETRIED = new Set(['InvalidChangeBatch', 'PriorRequestNotComplete', 'Throttling']);
const ZONE_ID = /^[A-Z0-9]{1,32}$/;

export function route53DnsPort(credentials: Readonly<Record<string, string>>, deps: HostedDnsDeps): DnsProviderPort {
  const key: SigV4Key = {
    accessKeyId: requiredCredential(credentials, 'route53', 'access_key_id'),
    secretAccessKey: requiredCredential(credentials, 'route53', 'secret_access_key'),
    // Route 53 is a global service: it signs with us-east-1 whatever region the account uses.
    region: 'us-east-1',
    service: 'route53',
  };
  const secrets = [key.secretAccessKey, key.accessKeyId];
  const configuredZone = credentials.hosted_zone_id?.replace(/^\/hostedzone\//, '');
  const origin = (deps.apiBase ?? ROUTE53_API).replace(/\/$/, '');

  const call = async (step: string, method: 'GET' | 'POST', path: string, body = '') => {
    const url = new URL(`${origin}${V}${path}`);
    const headers = sigV4Headers(method, url, body, method === 'POST' ? { 'content-type': 'application/xml' } : {}, key, deps.now());
    const answer = await callDnsApi(deps.outbound, {
      provider: PROVIDER,
      step,
      method,
      url: url.href,
      headers,
      body: body || undefined,
      secrets,
    });
    if (answer.status >= 200 && answer.status < 300) return { ok: true as const, xml: answer.text };
    const { code, message } = parseRoute53Error(answer.text);
    const said = providerText(code ? `${code}: ${message}` : message, secrets);
    return { ok: false as const, code, said, error: refusedBy(PROVIDER, step, answer.status, said, secrets) };
  };

  const zones = new Map<string, Promise<string | null>>();
  const zoneOf = async (name: string): Promise<string> => {
    if (configuredZone) return configuredZone;
    return findZone(
      name,
      zones,
      async (candidate) => {
        // More than one: a private zone of the same name (split horizon) may come first.
        const r = await call(
          `find the hosted zone of ${name}`,
          'GET',
          `/hostedzonesbyname?dnsname=${encodeURIComponent(candidate)}&maxitems=10`,
        );
        if (!r.ok) throw r.error;
        const zone = parseHostedZones(r.xml).find((z) => z.name.toLowerCase() === `${candidate}.` && !z.private);
        if (zone && !ZONE_ID.test(zone.id))
          throw new UnavailableError(`${PROVIDER} answered a hosted zone id we cannot use for ${candidate}`);
        return zone?.id ?? null;
      },
      () => new UnavailableError(`${PROVIDER} holds no public hosted zone containing ${name} for this access key`),
    );
  };

  const nameservers = new Map<string, Promise<string[]>>();
  const nameserversOf = (zoneId: string): Promise<string[]> => {
    let ns = nameservers.get(zoneId);
    if (!ns) {
      ns = call(`read hosted zone ${zoneId}`, 'GET', `/hostedzone/${encodeURIComponent(zoneId)}`).then((r) => {
        if (!r.ok) throw r.error;
        return xmlElements(r.xml, 'NameServer').map(xmlUnescape);
      });
      nameservers.set(zoneId, ns);
      ns.catch(() => nameservers.delete(zoneId));
    }
    return ns;
  };

  const readSet = async (zoneId: string, name: string): Promise<Route53RecordSet | undefined> => {
    const q = `name=${encodeURIComponent(name)}&type=TXT&maxitems=1`;
    const r = await call(`read TXT ${name}`, 'GET', `/hostedzone/${encodeURIComponent(zoneId)}/rrset?${q}`);
    if (!r.ok) throw r.error;
    // The list starts at the name asked for; the set there may belong to another name or type.
    const set = parseRecordSets(r.xml).find((s) => s.name.toLowerCase() === `${name}.` && s.type === 'TXT');
    if (set && (set.setIdentifier !== undefined || set.alias || set.values.length === 0))
      throw new UnavailableError(`${PROVIDER}: TXT ${name} has a routing policy or an alias; DNS-01 does not change such a set`);
    return set;
  };

  /** One value in or out of the set of `fqdn`, by compare-and-swap, retried while others write. */
  const change = async (fqdn: string, value: string, op: 'add' | 'remove'): Promise<void> => {
    const name = dnsName(fqdn);
    const zoneId = await zoneOf(name);
    let said = '';
    for (let attempt = 1; attempt <= ROUTE53_CHANGE_ATTEMPTS; attempt++) {
      const current = await readSet(zoneId, name);
      const values = current?.values ?? [];
      const has = values.some((v) => route53TxtDecode(v) === value);
      if (has === (op === 'add')) return;
      const next = op === 'add' ? [...values, route53TxtValue(value)] : values.filter((v) => route53TxtDecode(v) !== value);
      const changes: Route53Change[] = [];
      if (current) changes.push({ action: 'DELETE', set: current });
      if (next.length > 0)
        changes.push({
          action: 'CREATE',
          set: { name: `${name}.`, type: 'TXT', ttl: op === 'add' ? CHALLENGE_TTL_SECONDS : (current?.ttl ?? 0), values: next },
        });
      const step = `${op} a TXT value at ${name}`;
      const r = await call(step, 'POST', `/hostedzone/${encodeURIComponent(zoneId)}/rrset`, changeBatchXml(changes, `DNS-01 ${op}`));
      if (r.ok) return;
      if (!r.code || !RETRIED.has(r.code)) throw r.error;
      said = r.said;
      // Apart again before the next read: two writers retrying in step would collide again.
      await sleep(50 * attempt + Math.floor(Math.random() * 100));
    }
    throw new UnavailableError(
      providerText(
        `${PROVIDER} refused ${ROUTE53_CHANGE_ATTEMPTS} times to change TXT ${name} (the set keeps changing): ${said}`,
        secrets,
        400,
      ),
      30,
    );
  };

  return {
    kind: 'route53',
    addTxt: (fqdn, value) => change(fqdn, value, 'add'),
    removeTxt: (fqdn, value) => change(fqdn, value, 'remove'),
    isVisible: async (fqdn, value) => {
      const name = dnsName(fqdn);
      return visibleAtNameservers(await nameserversOf(await zoneOf(name)), name, value, deps);
    },
  };
}
