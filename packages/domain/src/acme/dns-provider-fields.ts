import { z } from 'zod';
import { checkFields } from '../billing/config-fields.ts';
import { ValidationError } from '../errors.ts';
import { trimmedName } from '../shared/fields.ts';
import { DNS_PROVIDER_KIND_NAMES, DNS_PROVIDER_KINDS, type DnsProviderKind } from './dns-provider-kinds.ts';

const kindDocs = Object.values(DNS_PROVIDER_KINDS)
  .map(
    (k) =>
      `${k.kind}: ${Object.entries(k.fields)
        .map(([n, f]) => `${n}${f.required ? '' : ' (optional)'}`)
        .join(', ')}`,
  )
  .join('; ');

export const DnsKind = z.enum(DNS_PROVIDER_KIND_NAMES).meta({ description: 'fixed at creation' });
export const DnsProviderName = trimmedName(100);
/** The whole credential set; which names and values a kind takes is dnsCredentialErrors'. */
export const DnsCredentials = z
  .record(z.string(), z.string())
  .meta({ description: `Write-only; the whole set, checked against the kind. ${kindDocs}.` });

/**
 * Why a whole credential set is refused for `kind`, by credential name: every given one must
 * be a field of the kind and valid, every required one given. Empty when the set is fine.
 */
export function dnsCredentialErrors(kind: DnsProviderKind, given: Record<string, string>): Record<string, string> {
  const errors = checkFields(kind.fields, given, { prefix: '', kind: kind.kind, allowNull: false });
  for (const [name, f] of Object.entries(kind.fields)) {
    if (f.required && given[name] === undefined) errors[name] ??= 'required';
  }
  return errors;
}

/** dnsCredentialErrors as a ValidationError naming `credentials.<name>`, for a kind known only from the stored row (PATCH). */
export function checkDnsCredentials(kind: DnsProviderKind, given: Record<string, string>): Record<string, string> {
  const errors = Object.entries(dnsCredentialErrors(kind, given));
  if (errors.length > 0)
    throw new ValidationError(
      `invalid credentials for kind ${kind.kind}`,
      Object.fromEntries(errors.map(([name, reason]) => [`credentials.${name}`, reason])),
    );
  return given;
}
