import { type FieldSpecs, stringField } from '../billing/config-fields.ts';
import { ValidationError } from '../errors.ts';

/**
 * The registry of DNS provider kinds (DNS-01 challenges): the credentials each kind takes.
 * Every credential is write-only (the whole set is sealed in credentials_enc), so every field
 * is declared secret; `required` ones must be given. The client that changes a kind's records
 * is `dnsProviderPort` (dns/dns-provider-port.ts): a kind added here needs its port there too.
 */
export interface DnsProviderKind {
  kind: string;
  description: string;
  fields: FieldSpecs;
}

const token = (description: string) => stringField({ secret: true, required: true, description });

export const DNS_PROVIDER_KINDS = {
  cloudflare: {
    kind: 'cloudflare',
    description: 'Cloudflare API token with Zone.DNS edit permission',
    fields: { api_token: token('API token') },
  },
  route53: {
    kind: 'route53',
    description: 'AWS Route 53 with an IAM access key',
    fields: {
      access_key_id: stringField({
        secret: true,
        required: true,
        pattern: /^[A-Z0-9]{16,128}$/,
        patternReason: 'must be an AWS access key id (upper-case letters and digits)',
        description: 'IAM access key id',
      }),
      secret_access_key: token('IAM secret access key'),
      region: stringField({
        secret: true,
        required: false,
        pattern: /^[a-z]{2}(-[a-z]+)+-\d+$/,
        patternReason: 'must be an AWS region (us-east-1)',
        description: 'AWS region, optional',
      }),
      hosted_zone_id: stringField({
        secret: true,
        required: false,
        pattern: /^[A-Z0-9]{1,32}$/,
        patternReason: 'must be a hosted zone id (upper-case letters and digits)',
        description: 'Hosted zone id, optional (looked up from the domain otherwise)',
      }),
    },
  },
  rfc2136: {
    kind: 'rfc2136',
    description: 'RFC 2136 dynamic update signed with a TSIG key, at the primary server of the zone (BIND, PowerDNS, Knot)',
    fields: {
      server: stringField({
        secret: true,
        required: true,
        max: 253,
        pattern: /^[A-Za-z0-9.:-]+$/,
        patternReason: 'must be an IP address or a host name',
        description: 'The primary (authoritative) server that takes updates: an IP address or a host name',
      }),
      port: stringField({
        secret: true,
        required: false,
        pattern: /^([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])$/,
        patternReason: 'must be a port number (1-65535)',
        description: 'Its port, default 53 (updates go over TCP)',
      }),
      key_name: stringField({
        secret: true,
        required: true,
        max: 253,
        pattern: /^[A-Za-z0-9._-]+$/,
        patternReason: 'must be a TSIG key name (letters, digits, dots, hyphens, underscores)',
        description: 'The TSIG key name (key "<name>" in named.conf)',
      }),
      key_algorithm: stringField({
        secret: true,
        required: false,
        pattern: /^hmac-sha(256|512)$/,
        patternReason: 'must be hmac-sha256 or hmac-sha512',
        description: 'hmac-sha256 (default) or hmac-sha512',
      }),
      key_secret: stringField({
        secret: true,
        required: true,
        max: 512,
        pattern: /^[A-Za-z0-9+/]+={0,2}$/,
        patternReason: 'must be the base64 secret (as tsig-keygen prints it)',
        description: 'The TSIG secret, base64',
      }),
      zone: stringField({
        secret: true,
        required: false,
        max: 253,
        pattern: /^([A-Za-z0-9_-]{1,63}\.)*[A-Za-z0-9_-]{1,63}\.?$/,
        patternReason: 'must be a zone name (example.com)',
        description: 'The zone to update; found from the server (SOA) when not set',
      }),
    },
  },
  digitalocean: {
    kind: 'digitalocean',
    description: 'DigitalOcean personal access token with domain write scope',
    fields: { api_token: token('Personal access token') },
  },
} as const satisfies Record<string, DnsProviderKind>;

export type DnsProviderKindName = keyof typeof DNS_PROVIDER_KINDS;

export const DNS_PROVIDER_KIND_NAMES = Object.keys(DNS_PROVIDER_KINDS) as [DnsProviderKindName, ...DnsProviderKindName[]];

export function dnsProviderKind(kind: string): DnsProviderKind {
  const k = Object.hasOwn(DNS_PROVIDER_KINDS, kind) ? DNS_PROVIDER_KINDS[kind as DnsProviderKindName] : undefined;
  if (!k) throw new ValidationError('unknown DNS provider kind', { kind: `must be one of ${DNS_PROVIDER_KIND_NAMES.join(', ')}` });
  return k;
}
