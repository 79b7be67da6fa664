import type { DnsProviderRow } from '@svc/db';
import { checkFields } from '../billing/config-fields.ts';
import { ValidationError } from '../errors.ts';
import type { Sealer } from '../shared/sealed.ts';
import type { DnsProviderKind } from './dns-provider-kinds.ts';

export interface DnsProviderView {
  id: string;
  kind: string;
  name: string;
  /** Names of the credentials stored; the values are never returned. */
  credentials_set: string[];
  created_at: string;
  updated_at: string;
}

export const dnsProviderView = (r: DnsProviderRow, credentialNames: string[]): DnsProviderView => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  credentials_set: [...credentialNames].sort(),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const openDnsCredentials = (secrets: Sealer, sealed: string): Record<string, string> =>
  JSON.parse(secrets.open(sealed)) as Record<string, string>;

/** A whole credential set for `kind`: every given field valid, every required one given. */
export function checkDnsCredentials(kind: DnsProviderKind, given: Record<string, unknown>): Record<string, string> {
  const errors = checkFields(kind.fields, given, { prefix: 'credentials.', kind: kind.kind, allowNull: false });
  for (const [name, f] of Object.entries(kind.fields)) {
    if (f.required && given[name] === undefined) errors[`credentials.${name}`] ??= 'required';
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(`invalid credentials for kind ${kind.kind}`, errors);
  return Object.fromEntries(Object.entries(given).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
