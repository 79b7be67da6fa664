import type { TestServer } from './test-server.ts';

export const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

/** Completes setup through HTTP and signs the owner in; returns the owner's token pair. */
export async function setupOwner(s: TestServer, owner = OWNER) {
  if (!s.setupToken) throw new Error('server is not in bootstrap mode');
  const created = await s.api.post('/api/v1/setup', { token: s.setupToken, ...owner });
  if (created.status !== 201) throw new Error(`setup failed: ${created.status} ${created.text}`);
  return { admin: created.body, ...(await login(s, owner.email, owner.password)) };
}

export async function login(s: TestServer, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await s.api.post('/api/v1/auth/login', { email, password }, { headers });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.body as { access_token: string; refresh_token: string; expires_in: number };
}

/** Creates an admin of `role` as the owner and signs them in. */
export async function adminWithRole(
  s: TestServer,
  ownerToken: string,
  role: 'owner' | 'admin' | 'viewer',
  email = `${role}-${Math.random().toString(36).slice(2)}@example.com`,
) {
  const password = `${role}-password-1`;
  const res = await s.api.post('/api/v1/admins', { email, password, role }, { token: ownerToken });
  if (res.status !== 201) throw new Error(`create admin failed: ${res.status} ${res.text}`);
  return { admin: res.body, email, password, ...(await login(s, email, password)) };
}
