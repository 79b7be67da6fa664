import type { AcmeAccountRow } from '@svc/db';
import { ValidationError } from '../errors.ts';

export const LETS_ENCRYPT_PRODUCTION = 'https://acme-v02.api.letsencrypt.org/directory';

export interface AcmeAccountView {
  id: string;
  email: string;
  directory_url: string;
  /** True once the account is registered with the ACME server (ACME issue). */
  registered: boolean;
  created_at: string;
}

/** The account key and URL stay internal. */
export const acmeAccountView = (r: AcmeAccountRow): AcmeAccountView => ({
  id: r.id,
  email: r.email,
  directory_url: r.directory_url,
  registered: r.account_url !== null,
  created_at: r.created_at.toISOString(),
});

/** An https URL without credentials or fragment; returned as the URL parser spells it. */
export function normalizeDirectoryUrl(raw: string, field = 'directory_url'): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ValidationError('invalid directory URL', { [field]: 'must be an https URL' });
  }
  if (u.protocol !== 'https:') throw new ValidationError('invalid directory URL', { [field]: 'must be an https URL' });
  if (u.username || u.password) throw new ValidationError('invalid directory URL', { [field]: 'must not carry credentials' });
  if (u.hash) throw new ValidationError('invalid directory URL', { [field]: 'must not have a fragment' });
  return u.toString();
}
