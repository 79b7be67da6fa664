import type { DnsProviderRow } from '@svc/db';
import type { Sealer } from '../shared/sealed.ts';

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
