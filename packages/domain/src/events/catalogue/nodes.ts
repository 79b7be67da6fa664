import { z } from 'zod';

const subject = { node_id: z.string(), name: z.string() };

/** Nodes and their agents (docs/events.md, "Nodes"). */
export const NODE_EVENTS = {
  'node.online': z
    .object({
      ...subject,
      /** Since when it had been offline (announced); null the first time the node connects. */
      offline_since: z.string().nullable(),
      agent_version: z.string().nullable(),
    })
    .meta({
      description:
        "A node's agent connected after the node had been announced offline (or for the first time). A reconnect within the offline grace raises nothing: node.offline was never sent.",
    }),
  'node.offline': z
    .object({
      ...subject,
      /** When its stream ended (or its replica was found gone). */
      offline_since: z.string(),
      grace_seconds: z.number().int(),
    })
    .meta({
      description:
        "A node's agent has had no stream for longer than the grace (SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS): its users are probably cut off. Once per outage; node.online tells when it is back.",
    }),
  'node.agent_outdated': z
    .object({
      ...subject,
      agent_version: z.string(),
      previous_agent_version: z.string().nullable(),
      /** The svc-agent release this control plane ships with. */
      release: z.string(),
    })
    .meta({
      description:
        "A node's agent reports a version older than this release's minor (the node view's outdated_agent): still served, to be upgraded before the next release. Once per version a node reports.",
    }),
  'node.apply_failed': z
    .object({
      ...subject,
      revision: z.number().int(),
      /** The revision the node still runs. */
      applied_revision: z.number().int(),
      /** The agent's error text, the engine's words (its last 4,000 characters). */
      error: z.string(),
      /** When this run of failures began (the first failure after the last successful apply). */
      failing_since: z.string(),
    })
    .meta({
      description:
        "A node's agent could not apply a desired state (the engine refused the configuration, or it did not start): the node keeps serving its last applied revision. Once per failed revision.",
    }),
  'node.apply_recovered': z
    .object({ ...subject, revision: z.number().int(), failed_revision: z.number().int(), failing_since: z.string() })
    .meta({
      description: 'A node that had failed to apply applied a revision at or past the failed one: it runs its desired state again.',
    }),
  'node.agent_upgrade_failed': z
    .object({
      ...subject,
      /** The release asked for. */
      version: z.string(),
      /** The agent that runs (and said so). */
      agent_version: z.string(),
      /** The agent's words (their first 1,000 characters). */
      error: z.string(),
    })
    .meta({
      description:
        'An agent upgrade asked from the panel did not happen (download, checksum or start failed, the old agent was put back). The node runs its old agent, serving as before.',
    }),
  'node.traffic_limited': z
    .object({
      ...subject,
      /** Raw bytes the node carried this period. */
      period_bytes: z.number().int(),
      quota_bytes: z.number().int(),
      /** When the period starts over and the node comes back (null: its quota never resets). */
      resets_at: z.string().nullable(),
    })
    .meta({
      description:
        'A node reached its traffic quota for the period: its inbounds are out of its desired state and out of every subscription link until the period resets or an admin raises the quota.',
    }),
  'node.traffic_limit_lifted': z
    .object({
      ...subject,
      /** What lifted it: the period reset, or the quota raised or removed. */
      reason: z.string(),
      period_bytes: z.number().int(),
      quota_bytes: z.number().int().nullable(),
      limited_since: z.string(),
    })
    .meta({
      description:
        'A limited node is back in service: its period reset, or its quota was raised or removed. Its inbounds are in its desired state and the links again.',
    }),
  'node.certificate_served': z
    .object({
      ...subject,
      certificate_id: z.string(),
      domains: z.array(z.string()),
      not_after: z.string(),
      /** The node's revision that carried the material, now applied. */
      revision: z.number().int(),
    })
    .meta({
      description:
        "A node applied the revision carrying a certificate's new material (issued, renewed or uploaded anew): the node serves it now. Once per node and material.",
    }),
} as const;
