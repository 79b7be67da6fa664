import { z } from 'zod';

const subject = { client_id: z.string(), email: z.string() };

/** Clients, the customers (docs/events.md, "Clients"). */
export const CLIENT_EVENTS = {
  'client.registered': z
    .object({
      ...subject,
      status: z.enum(['pending', 'active']),
      /** How they registered: password or oauth:<provider>. */
      method: z.string(),
      registration_mode: z.enum(['application', 'open']),
    })
    .meta({
      description:
        'A customer registered on the portal, in either mode: application (status pending, waits for approval) or open (active at once); by password or a first OAuth sign-in.',
    }),
  'client.approved': z
    .object({ ...subject, previous_status: z.enum(['pending', 'rejected']) })
    .meta({ description: 'An admin approved an application: the client is active and may sign in and buy.' }),
  'client.rejected': z.object(subject).meta({ description: 'An admin rejected a pending application.' }),
  'client.disabled': z
    .object(subject)
    .meta({ description: "An admin disabled the client: its sessions end and its subscriptions' users leave the nodes." }),
  'client.enabled': z.object(subject).meta({ description: 'An admin enabled a disabled client again.' }),
} as const;
