import { type FieldSpecs, stringField } from '../billing/config-fields.ts';
import { ValidationError } from '../errors.ts';

/**
 * The registry of DNS provider kinds (DNS-01 challenges): the credentials each kind takes.
 * Every credential is write-only (the whole set is sealed in credentials_enc), so every field
 * is declared secret; `required` ones must be given. The ACME issue adds each kind's client.
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
