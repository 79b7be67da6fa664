import { z } from '@hono/zod-openapi';
import { AdminStatus } from '@svc/domain';

const Timestamp = z.string().openapi({ format: 'date-time' });

export { AdminStatus };
export const Connectivity = z.enum(['online', 'offline']);

export const NodeSchema = z
  .object({
    id: z.string().openapi({ example: 'nod_01jd0000000000000000000000' }),
    name: z.string(),
    address: z.string(),
    admin_status: AdminStatus,
    connectivity: Connectivity,
    desired_revision: z.number().int().openapi({ description: 'Moves with every change to what the node must run' }),
    applied_revision: z.number().int().openapi({ description: 'The last revision the agent applied' }),
    last_apply_error: z.string().nullable(),
    last_seen_at: Timestamp.nullable(),
    agent_version: z.string().nullable(),
    xray_version: z.string().nullable(),
    hostname: z.string().nullable(),
    os: z.string().nullable(),
    arch: z.string().nullable(),
    status: z.record(z.string(), z.unknown()).nullable().openapi({ description: "The agent's last StatusReport (snake_case), or null" }),
    enroll_token_expires_at: Timestamp.nullable().openapi({ description: 'Expiry of the outstanding enrollment token, if one was issued' }),
    enrolled: z.boolean().openapi({ description: 'An agent holds a client certificate for this node' }),
    cert_not_after: Timestamp.nullable().openapi({ description: "Expiry of the agent's client certificate (renewed over the stream)" }),
    last_status_at: Timestamp.nullable(),
    last_apply_at: Timestamp.nullable(),
    usage_entries_dropped: z
      .number()
      .int()
      .openapi({ description: 'Usage entries the agent reported for subscriptions that no longer exist (dropped, counted)' }),
    outdated_agent: z.boolean().openapi({
      description:
        "The agent is of an older minor than this control plane's release: served while it is the previous minor, refused when older; upgrade it (docs/upgrades.md)",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Node');
