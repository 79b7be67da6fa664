import { z } from 'zod';

const Role = z.enum(['owner', 'admin', 'viewer']);

/** Admins and API tokens (docs/events.md, "Admins and API tokens"). */
export const ADMIN_EVENTS = {
  'admin.created': z.object({ admin_id: z.string(), email: z.string(), role: Role }).meta({ description: 'An owner added an admin.' }),
  'admin.role_changed': z.object({ admin_id: z.string(), email: z.string(), role: Role, previous_role: Role }).meta({
    description: "An owner changed an admin's role: their access tokens and API tokens carry the new rights at their next request.",
  }),
  'admin.deleted': z
    .object({ admin_id: z.string(), email: z.string(), role: Role })
    .meta({ description: 'An owner removed an admin: their sessions and API tokens stop at once.' }),
  'api_token.created': z
    .object({
      token_id: z.string(),
      name: z.string(),
      admin_id: z.string(),
      scopes: z.array(z.string()),
      expires_at: z.string().nullable(),
    })
    .meta({ description: 'An admin created an API token (its secret is never in an event).' }),
  'api_token.revoked': z
    .object({ token_id: z.string(), name: z.string(), admin_id: z.string() })
    .meta({ description: 'An API token was revoked: refused from the next request, on every replica.' }),
} as const;
