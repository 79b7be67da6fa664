import { z } from '@hono/zod-openapi';
import { AdminStatus, TrafficQuotaRenewal } from '@svc/domain';

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
    last_apply_error: z.string().nullable().openapi({
      description:
        "While the node fails to apply: 'revision N: ' and the agent's words (the engine's error, its last 4,000 characters); null once a revision at or past N applies",
    }),
    apply_failed_revision: z.number().int().nullable().openapi({
      description: 'The revision the agent failed to apply; the node runs applied_revision meanwhile. Null when not failing',
    }),
    apply_failing_since: Timestamp.nullable().openapi({
      description: 'When the node began failing to apply (the first failure since its last successful apply); null when not failing',
    }),
    engine: z
      .object({
        family: z.enum(['xray', 'v2ray', 'unknown']),
        version: z
          .string()
          .nullable()
          .openapi({ description: 'As its agent reported it; null: not reported yet (compiled for current Xray)' }),
        sniffing: z.array(z.enum(['http', 'tls', 'quic'])).openapi({ description: 'Sniffing destinations kept from the profiles' }),
        route_only: z.boolean().openapi({ description: 'Route-only sniffing is kept (else such sniffing overrides nothing)' }),
        empty_shadowsocks: z
          .boolean()
          .openapi({ description: 'Shadowsocks inbounds without users run (else left out until their first user)' }),
      })
      .openapi('NodeEngine', {
        description:
          "The engine the node's desired state is compiled for, from the version its agent reports: what the engine does not accept is left out (docs/agent-gateway.md, Engines)",
      }),
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
    agent_upgrade_available: z.string().nullable().openapi({
      description:
        "The svc-agent release this control plane serves, when the node's agent is older (any older semver); null when it is current, newer, not svc-agent or not seen yet. POST /nodes/{id}/upgrade-agent installs it",
    }),
    agent_upgrade: z
      .object({
        version: z.string().openapi({ description: 'The release asked for' }),
        state: z.enum(['pending', 'succeeded', 'failed']),
        error: z.string().nullable().openapi({ description: "The agent's words when it failed (the old agent runs on)" }),
        requested_at: Timestamp,
        finished_at: Timestamp.nullable(),
      })
      .nullable()
      .openapi({ description: 'The last agent upgrade asked for, and how it went; null when none was' }),
    traffic_multiplier: z.number().openapi({
      description:
        'Bytes charged to subscriptions per byte the node reports (0 to 100; 1: a byte is a byte). Raw bytes are kept beside the charged ones',
    }),
    traffic_quota_bytes: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Raw bytes the node may carry per quota period; null: no quota' }),
    traffic_quota_renewal: TrafficQuotaRenewal,
    traffic: z
      .object({
        period_bytes: z.number().int().openapi({ description: 'Raw bytes the node carried in its current quota period' }),
        period_started_at: Timestamp,
        resets_at: Timestamp.nullable().openapi({ description: 'When the count starts over (UTC boundary); null for no_reset' }),
        limited_since: Timestamp.nullable().openapi({
          description:
            'Since when the node is limited by its quota: its inbounds are out of its desired state and every link. Null: not limited',
        }),
        total_raw_bytes: z.number().int().openapi({ description: 'All time: raw bytes the node carried for subscriptions' }),
        total_charged_bytes: z.number().int().openapi({ description: 'All time: bytes its usage charged to subscriptions' }),
      })
      .openapi('NodeTraffic', { description: "The node's traffic and its quota's state (read only)" }),
    enforcement: z
      .object({
        device_limits: z.boolean().openapi({ description: 'device limits are enforced on live connections' }),
        speed_caps: z.boolean().openapi({ description: 'speed caps are shaped in the kernel' }),
        entitlements: z
          .boolean()
          .openapi({ description: 'not-after times and traffic slices are enforced while the control plane is away' }),
        speed_caps_error: z.string().openapi({ description: 'why speed caps are not enforced; empty when they are' }),
        device_limits_error: z.string().openapi({ description: 'why device limits are not enforced; empty when they are' }),
        device_source: z.string().openapi({ description: 'engine-online-ips or access-log: where device addresses come from' }),
        shaped_devices: z.array(z.string()).openapi({ description: 'network devices shaped (egress, and their IFB for upload)' }),
        reported_at: Timestamp,
      })
      .nullable()
      .openapi('NodeEnforcement', {
        description:
          "What the node's agent enforces of the subscriptions' limits, as it last reported; null: it never reported (an agent of an earlier release enforces none of them)",
      }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Node');
