import type { AdminStatus, Connectivity, NodeRow } from '@svc/db';
import { isOutdatedAgent } from '../agents/agent-version.ts';

export interface NodeView {
  id: string;
  name: string;
  address: string;
  admin_status: AdminStatus;
  connectivity: Connectivity;
  desired_revision: number;
  applied_revision: number;
  last_apply_error: string | null;
  last_seen_at: string | null;
  agent_version: string | null;
  xray_version: string | null;
  hostname: string | null;
  os: string | null;
  arch: string | null;
  /** The agent's last StatusReport (snake_case), or null before the first one. */
  status: Record<string, unknown> | null;
  /** Whether an enrollment token was issued and has not expired (the token itself is never shown again). */
  enroll_token_expires_at: string | null;
  enrolled: boolean;
  cert_not_after: string | null;
  last_status_at: string | null;
  last_apply_at: string | null;
  usage_entries_dropped: number;
  /** Spec 9.4: the agent is of an older minor than this release's (isOutdatedAgent): upgrade it before the next release. */
  outdated_agent: boolean;
  created_at: string;
  updated_at: string;
}

export const nodeView = (r: NodeRow): NodeView => ({
  id: r.id,
  name: r.name,
  address: r.address,
  admin_status: r.admin_status,
  connectivity: r.connectivity,
  desired_revision: Number(r.desired_revision),
  applied_revision: Number(r.applied_revision),
  last_apply_error: r.last_apply_error,
  last_seen_at: r.last_seen_at?.toISOString() ?? null,
  agent_version: r.agent_version,
  xray_version: r.xray_version,
  hostname: r.hostname,
  os: r.os,
  arch: r.arch,
  status: r.status ?? null,
  enroll_token_expires_at: r.enroll_token_hash && r.enroll_token_expires_at ? r.enroll_token_expires_at.toISOString() : null,
  enrolled: r.cert_serial !== null,
  cert_not_after: r.cert_not_after?.toISOString() ?? null,
  last_status_at: r.last_status_at?.toISOString() ?? null,
  last_apply_at: r.last_apply_at?.toISOString() ?? null,
  usage_entries_dropped: Number(r.usage_entries_dropped),
  outdated_agent: isOutdatedAgent(r.agent_version),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
