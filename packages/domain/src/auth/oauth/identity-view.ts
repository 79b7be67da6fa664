/** An OAuth identity as its owner sees it in settings. */
export interface IdentityView {
  provider: string;
  /** The email the provider gave when the identity was linked. */
  email: string | null;
  created_at: string;
  last_used_at: string | null;
}

export const identityView = (r: { provider: string; email: string | null; created_at: Date; last_used_at: Date | null }): IdentityView => ({
  provider: r.provider,
  email: r.email,
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at ? r.last_used_at.toISOString() : null,
});
