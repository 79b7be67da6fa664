/**
 * Which table columns each searchable list sorts by on the server, and under which key of its
 * route (`sort=email`, `sort=-expires`). The router checks the URL's `sort` against these, so
 * they live apart from the screens (which load lazily).
 */
export const CLIENT_SORTS: Record<string, string> = { created_at: 'created', email: 'email' };
export const SUBSCRIPTION_SORTS: Record<string, string> = { id: 'created', expires_at: 'expires', usage: 'used' };
export const NODE_SORTS: Record<string, string> = { name: 'name', address: 'address' };
export const PAYMENT_SORTS: Record<string, string> = { created_at: 'created', amount: 'amount' };
export const AUDIT_SORTS: Record<string, string> = { at: 'created' };

/** The values a route's `sort` takes: each key, and each with `-`. */
export const sortValues = (keys: Record<string, string>): string[] => Object.values(keys).flatMap((k) => [k, `-${k}`]);
