import type { ClientRow, ClientStatus } from '@svc/db';

export interface ClientView {
  id: string;
  email: string;
  status: ClientStatus;
  email_verified_at: string | null;
  has_password: boolean;
  note: string | null;
  created_at: string;
  updated_at: string;
}

/** Never the password hash. */
export const clientView = (r: ClientRow): ClientView => ({
  id: r.id,
  email: r.email,
  status: r.status,
  email_verified_at: r.email_verified_at?.toISOString() ?? null,
  has_password: r.password_hash !== null,
  note: r.note,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const CLIENT_EMAIL_TAKEN = { email: 'already taken' };
