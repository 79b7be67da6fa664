import type { AcmeAccountRow } from '@svc/db';

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
