import {
  CHALLENGE_TTL_SECONDS,
  type DnsAdapterFactory,
  type DnsProviderDeps,
  type DnsProviderPort,
  outboundFailure,
  outboundReason,
  UnavailableError,
} from '@svc/domain';
import { cloudflareDnsPort } from './cloudflare-client.ts';
import { digitalOceanDnsPort } from './digitalocean-client.ts';
import { type Rfc2136Settings, serverUnreachable, txtVisibleAt, updateTxt, zoneAt } from './rfc2136-client.ts';
import type { TsigAlgorithm } from './rfc2136-message.ts';
import { route53DnsPort } from './route53-client.ts';

export function rfc2136Settings(credentials: Readonly<Record<string, string>>): Rfc2136Settings {
  const need = (k: string) => {
    const v = credentials[k];
    if (!v) throw new UnavailableError(`the rfc2136 DNS provider is not configured: ${k} is not set`);
    return v;
  };
  return {
    server: need('server'),
    port: credentials.port ? Number(credentials.port) : 53,
    key: { name: need('key_name'), algorithm: (credentials.key_algorithm ?? 'hmac-sha256') as TsigAlgorithm, secret: need('key_secret') },
    zone: credentials.zone,
  };
}

/** The port of a stored DNS provider, its credentials opened (the domain's DnsAdapterFactory). */
export const dnsProviderPort: DnsAdapterFactory = (kind, credentials, deps) => {
  if (kind === 'rfc2136') return rfc2136Port(rfc2136Settings(credentials), deps);
  if (kind === 'cloudflare') return cloudflareDnsPort(credentials, deps);
  if (kind === 'route53') return route53DnsPort(credentials, deps);
  if (kind === 'digitalocean') return digitalOceanDnsPort(credentials, deps);
  throw new UnavailableError(`DNS provider kind ${kind} cannot change records`);
};

/**
 * RFC 2136: the configured server resolved once per operation by the outbound client and checked
 * against the destination policy; the exchange goes to that address. A refused destination says
 * which rule refused it; a name with no address reads like any server that does not answer.
 */
function rfc2136Port(s: Rfc2136Settings, deps: DnsProviderDeps): DnsProviderPort {
  const pinned = async (): Promise<Rfc2136Settings> => {
    const startedAt = Date.now();
    try {
      return { ...s, server: (await deps.outbound.pin(s.server)).address, name: s.server };
    } catch (err) {
      const failure = outboundFailure(err);
      if (failure?.reason === 'refused') throw new UnavailableError(`the DNS server ${s.server}:${s.port}: ${outboundReason(failure)}`);
      return serverUnreachable(s, startedAt);
    }
  };
  return {
    kind: 'rfc2136',
    addTxt: async (fqdn, value) => {
      const at = await pinned();
      await updateTxt(at, await zoneAt(at, fqdn), [{ op: 'add', name: fqdn, value, ttl: CHALLENGE_TTL_SECONDS }], deps.now);
    },
    removeTxt: async (fqdn, value) => {
      const at = await pinned();
      await updateTxt(at, await zoneAt(at, fqdn), [{ op: 'delete', name: fqdn, value }], deps.now);
    },
    isVisible: async (fqdn, value) => {
      const at = await pinned().catch(() => undefined);
      return at !== undefined && txtVisibleAt(at, fqdn, value);
    },
  };
}
