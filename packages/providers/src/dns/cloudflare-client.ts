import { CHALLENGE_TTL_SECONDS, type DnsProviderPort, UnavailableError } from '@svc/domain';
import { visibleAtNameservers } from './authoritative-visibility.ts';
import {
  asArray,
  asRecord,
  asString,
  bearerJsonApi,
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
 * DNS-01 through the Cloudflare API (v4, a bearer token with Zone.DNS edit). Cloudflare keeps
 * one record per value, so adding and removing one value touches only its own record and two
 * challenges on one name never meet.
 */

export const CLOUDFLARE_API = 'https://api.cloudflare.com';
const PROVIDER = 'Cloudflare';
/** "An identical record already exists" / "The record already exists": the value is there. */
const ALREADY_THERE = new Set([81057, 81058]);
/** Zone and record ids go into paths: Cloudflare's are hex. */
const ID = /^[A-Za-z0-9]{1,64}$/;

interface CloudflareZone {
  id: string;
  nameservers: string[];
}

interface Envelope {
  status: number;
  success: boolean;
  result: unknown;
  errors: { code: number | undefined; message: string }[];
  /** The answer was not JSON at all (a proxy's error page). */
  notJson: boolean;
}

export function cloudflareDnsPort(credentials: Readonly<Record<string, string>>, deps: HostedDnsDeps): DnsProviderPort {
  const token = requiredCredential(credentials, 'cloudflare', 'api_token');
  const secrets = [token];
  const base = `${(deps.apiBase ?? CLOUDFLARE_API).replace(/\/$/, '')}/client/v4`;
  const api = bearerJsonApi(deps.outbound, { provider: PROVIDER, base, token });

  /** One call, its JSON envelope read: `success` and `errors` are what Cloudflare says. */
  const call = async (step: string, method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown): Promise<Envelope> => {
    const answer = await api(step, method, path, json);
    const parsed = jsonOf(answer.text);
    const body = asRecord(parsed);
    const errors = asArray(body.errors).map((e) => {
      const { code, message } = asRecord(e);
      return { code: typeof code === 'number' ? code : undefined, message: asString(message) ?? '' };
    });
    const success = body.success === true && answer.status >= 200 && answer.status < 300;
    return { status: answer.status, success, result: body.result, errors, notJson: parsed === undefined };
  };
  const refused = (step: string, e: Envelope) => {
    const said = e.errors
      .slice(0, 5)
      .map((x) => (x.code !== undefined ? `${x.message} (${x.code})` : x.message))
      .join('; ');
    return refusedBy(
      PROVIDER,
      step,
      e.status,
      providerText(said || (e.notJson ? 'an answer that is not JSON' : 'no error given'), secrets),
      secrets,
    );
  };
  const resultArray = (step: string, e: Envelope): Record<string, unknown>[] => {
    if (!e.success) throw refused(step, e);
    if (!Array.isArray(e.result)) throw new UnavailableError(`${PROVIDER} answered something we cannot read (${step})`);
    return e.result.map(asRecord);
  };

  const zones = new Map<string, Promise<CloudflareZone | null>>();
  const zoneOf = (name: string) =>
    findZone(
      name,
      zones,
      async (candidate) => {
        const step = `find the zone of ${name}`;
        const found = resultArray(step, await call(step, 'GET', `/zones?name=${encodeURIComponent(candidate)}`)).find(
          (z) => asString(z.name)?.toLowerCase() === candidate,
        );
        if (!found) return null;
        const id = asString(found.id);
        if (!id || !ID.test(id)) throw new UnavailableError(`${PROVIDER} answered a zone id we cannot use for ${candidate}`);
        return { id, nameservers: asArray(found.name_servers).filter((n): n is string => typeof n === 'string') };
      },
      () => new UnavailableError(`${PROVIDER} holds no zone containing ${name} for this token`),
    );

  return {
    kind: 'cloudflare',
    addTxt: async (fqdn, value) => {
      const name = dnsName(fqdn);
      const zone = await zoneOf(name);
      const step = `add a TXT value at ${name}`;
      const e = await call(step, 'POST', `/zones/${zone.id}/dns_records`, {
        type: 'TXT',
        name,
        content: value,
        ttl: CHALLENGE_TTL_SECONDS,
      });
      if (!e.success && !e.errors.some((x) => x.code !== undefined && ALREADY_THERE.has(x.code))) throw refused(step, e);
    },
    removeTxt: async (fqdn, value) => {
      const name = dnsName(fqdn);
      const zone = await zoneOf(name);
      const step = `remove a TXT value at ${name}`;
      const q = `type=TXT&name=${encodeURIComponent(name)}&per_page=100`;
      const records = resultArray(step, await call(step, 'GET', `/zones/${zone.id}/dns_records?${q}`));
      for (const r of records) {
        const id = asString(r.id);
        if (unquoted(asString(r.content) ?? '') !== value || asString(r.name)?.toLowerCase() !== name) continue;
        if (!id || !ID.test(id)) throw new UnavailableError(`${PROVIDER} answered a record id we cannot use at ${name}`);
        const e = await call(step, 'DELETE', `/zones/${zone.id}/dns_records/${id}`);
        // 404: gone already (another cleanup of the same challenge got there first).
        if (!e.success && e.status !== 404) throw refused(step, e);
      }
    },
    isVisible: async (fqdn, value) => {
      const name = dnsName(fqdn);
      return visibleAtNameservers((await zoneOf(name)).nameservers, name, value, deps);
    },
  };
}
