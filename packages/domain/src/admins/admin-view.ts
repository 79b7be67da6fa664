import type { AdminRow } from '@svc/db';

export interface AdminView {
  id: string;
  email: string;
  role: AdminRow['role'];
  has_password: boolean;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export const adminView = (r: AdminRow): AdminView => ({
  id: r.id,
  email: r.email,
  role: r.role,
  has_password: r.password_hash !== null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  last_login_at: r.last_login_at?.toISOString() ?? null,
});
