import { z } from 'zod';

/** Free text admins keep on a record (clients, subscriptions); null clears it. */
export const AdminNote = z.string().max(2000).nullable().meta({ description: 'free text for admins' });
