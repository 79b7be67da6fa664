import type { AcmeAccountRow } from '@svc/db';

export interface AcmeAccountView {
  id: string;
  email: string;
  directory_url: string;
  /** True once the CA took the account (the worker registers it after create). */
  registered: boolean;
  registered_at: string | null;
  /** Why the last registration attempt failed, in words; null once registered. */
  registration_error: string | null;
  created_at: string;
}

/** The account key, URL and External Account Binding stay internal. */
export const acmeAccountView = (r: AcmeAccountRow): AcmeAccountView => ({
  id: r.id,
  email: r.email,
  directory_url: r.directory_url,
  registered: r.account_url !== null,
  registered_at: r.registered_at?.toISOString() ?? null,
  registration_error: r.account_url === null ? r.registration_error : null,
  created_at: r.created_at.toISOString(),
});
