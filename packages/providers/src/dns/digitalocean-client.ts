import { resolveNs } from 'node:dns/promises';
import { CHALLENGE_TTL_SECONDS, type DnsProviderPort, UnavailableError } from '@svc/domain';
import { visibleAtNameservers } from './authoritative-visibility.ts';
import {
  asArray,
  asRecord,
  asString,
  bearerJsonApi,
  type DnsApiAnswer,
  dnsName,
  findZone,
  type HostedDnsDeps,
  jsonOf,
  providerText,
  refusedBy,
  requiredCredential,
  unquoted,
} from './hosted-dns-api.ts';

/**
 * DNS-01 through the DigitalOcean API (v2, a personal access token with domain write scope).
 * DigitalOcean keeps one record per value, so adding and removing one value touches only its
 * own record. It takes duplicates, so a value already there is not added again.
 */

export const DIGITALOCEAN_API = 'https://api.digitalocean.com';
const PROVIDER = 'DigitalOcean';

interface DoRecord {
  id: number;
  name: string;
  data: string;
}

export function digitalOceanDnsPort(credentials: Readonly<Record<string, string>>, deps: HostedDnsDeps): DnsProviderPort {
  const token = requiredCredential(credentials, 'digitalocean', 'api_token');
  const secrets = [token];
  const base = `${(deps.apiBase ?? DIGITALOCEAN_API).replace(/\/$/, '')}/v2`;

  const call = bearerJsonApi(deps.outbound, { provider: PROVIDER, base, token });
  const ok = (a: DnsApiAnswer) => a.status >= 200 && a.status < 300;
  /** DigitalOcean's refusal: `{ id: "unauthorized", message: "Unable to authenticate you" }`. */
  const refused = (step: string, a: DnsApiAnswer) => {
    const parsed = jsonOf(a.text);
    const { id, message } = asRecord(parsed);
    const said = [asString(message), asString(id) && `(${asString(id)})`].filter(Boolean).join(' ');
    return refusedBy(
      PROVIDER,
      step,
      a.status,
      providerText(said || (parsed === undefined ? 'an answer that is not JSON' : 'no error given'), secrets),
      secrets,
    );
  };
  const body = (step: string, a: DnsApiAnswer): Record<string, unknown> => {
    if (!ok(a)) throw refused(step, a);
    const parsed = jsonOf(a.text);
    if (parsed === undefined) throw new UnavailableError(`${PROVIDER} answered something that is not JSON (${step})`);
    return asRecord(parsed);
  };

  const domains = new Map<string, Promise<string | null>>();
  const domainOf = (name: string) =>
    findZone(
      name,
      domains,
      async (candidate) => {
        const step = `find the domain of ${name}`;
        const a = await call(step, 'GET', `/domains/${encodeURIComponent(candidate)}`);
        if (a.status === 404) return null;
        return asString(asRecord(body(step, a).domain).name)?.toLowerCase() === candidate ? candidate : null;
      },
      () => new UnavailableError(`${PROVIDER} holds no domain containing ${name} for this token`),
    );

  const records = async (step: string, domain: string, query: string): Promise<DoRecord[]> => {
    const b = body(step, await call(step, 'GET', `/domains/${encodeURIComponent(domain)}/records?${query}&per_page=200`));
    return asArray(b.domain_records).flatMap((r) => {
      const { id, name, data } = asRecord(r);
      return typeof id === 'number' && Number.isSafeInteger(id) && typeof name === 'string' && typeof data === 'string'
        ? [{ id, name, data }]
        : [];
    });
  };
  const txtRecords = (step: string, domain: string, name: string) =>
    records(step, domain, `type=TXT&name=${encodeURIComponent(name)}`).then((rs) =>
      // `name` is relative in records ("_acme-challenge.www", "@" for the apex).
      rs.filter((r) => r.name.toLowerCase() === relativeName(name, domain)),
    );

  const nameservers = new Map<string, Promise<string[]>>();
  const nameserversOf = (domain: string): Promise<string[]> => {
    let ns = nameservers.get(domain);
    if (!ns) {
      ns = records(`read the name servers of ${domain}`, domain, 'type=NS').then(async (rs) => {
        const fromApi = rs.filter((r) => r.name === '@').map((r) => r.data);
        // No NS records in the API (not expected): what the DNS delegates to.
        return fromApi.length > 0 ? fromApi : resolveNs(domain).catch(() => []);
      });
      nameservers.set(domain, ns);
      ns.catch(() => nameservers.delete(domain));
    }
    return ns;
  };

  return {
    kind: 'digitalocean',
    addTxt: async (fqdn, value) => {
      const name = dnsName(fqdn);
      const domain = await domainOf(name);
      const step = `add a TXT value at ${name}`;
      if ((await txtRecords(step, domain, name)).some((r) => unquoted(r.data) === value)) return;
      const record = { type: 'TXT', name: relativeName(name, domain), data: value, ttl: CHALLENGE_TTL_SECONDS };
      const a = await call(step, 'POST', `/domains/${encodeURIComponent(domain)}/records`, record);
      if (!ok(a)) throw refused(step, a);
    },
    removeTxt: async (fqdn, value) => {
      const name = dnsName(fqdn);
      const domain = await domainOf(name);
      const step = `remove a TXT value at ${name}`;
      for (const r of await txtRecords(step, domain, name)) {
        if (unquoted(r.data) !== value) continue;
        const a = await call(step, 'DELETE', `/domains/${encodeURIComponent(domain)}/records/${r.id}`);
        // 404: gone already (another cleanup of the same challenge got there first).
        if (!ok(a) && a.status !== 404) throw refused(step, a);
      }
    },
    isVisible: async (fqdn, value) => {
      const name = dnsName(fqdn);
      return visibleAtNameservers(await nameserversOf(await domainOf(name)), name, value, deps);
    },
  };
}

/** A name inside `domain` as DigitalOcean's records name it: relative, `@` for the apex. */
export function relativeName(name: string, domain: string): string {
  return name === domain ? '@' : name.slice(0, -(domain.length + 1));
}
