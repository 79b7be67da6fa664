import type { AdminStatus, Connectivity, NodeRow, Renewal } from '@svc/db';
import { type AgentUpgradeView, agentUpgradeAvailable, agentUpgradeView } from '../agents/agent-upgrades.ts';
import { AGENT_RELEASE, isOutdatedAgent } from '../agents/agent-version.ts';
import { type EngineFamily, engineOf, type SniffOverride } from '../agents/engine-capabilities.ts';
import { enforcementView, type NodeEnforcement } from '../limits/enforcement.ts';
import { type NodeTrafficView, nodeTrafficView } from './node-traffic.ts';

export interface NodeView {
  id: string;
  name: string;
  address: string;
  admin_status: AdminStatus;
  connectivity: Connectivity;
  desired_revision: number;
  applied_revision: number;
  /** "revision N: <the agent's words>" while the node fails to apply; null once a revision at or past N applies. */
  last_apply_error: string | null;
  /** The revision the agent failed to apply (the node runs applied_revision meanwhile); null when not failing. */
  apply_failed_revision: number | null;
  /** When the node began failing to apply (the first failure since its last successful apply); null when not failing. */
  apply_failing_since: string | null;
  /** The engine the node's desired state is compiled for, and what that leaves out of its profiles (docs/agent-gateway.md, "Engines"). */
  engine: NodeEngineView;
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
  /** The release this control plane serves (AGENT_RELEASE), when the node's svc-agent is older: POST /nodes/{id}/upgrade-agent installs it. Null otherwise. */
  agent_upgrade_available: string | null;
  /** The last upgrade asked from the panel and how it went; null: none asked. */
  agent_upgrade: AgentUpgradeView | null;
  /** Bytes charged to subscriptions per byte the node reports (issue 35.4; node-traffic.ts). */
  traffic_multiplier: number;
  /** Raw bytes the node may carry per quota period; null: no quota. */
  traffic_quota_bytes: number | null;
  traffic_quota_renewal: Renewal;
  /** The quota's state and the node's traffic (read only). */
  traffic: NodeTrafficView;
  /**
   * What the node's agent enforces of the subscriptions' limits (issue 36; docs/limits.md), as it
   * last reported; null: it never reported (an agent of an earlier release enforces none).
   */
  enforcement: NodeEnforcement | null;
  created_at: string;
  updated_at: string;
}

export interface NodeEngineView {
  /** xray, v2ray, or unknown (a version no rule places: compiled with what every engine accepts). */
  family: EngineFamily;
  /** The version its agent reported when the engine was adopted; null: not reported yet (compiled for current Xray). */
  version: string | null;
  /** Sniffing destinations kept from the profiles. */
  sniffing: SniffOverride[];
  route_only: boolean;
  /** Shadowsocks inbounds without users run (else they are left out until their first user). */
  empty_shadowsocks: boolean;
}

function engineView(compiledFor: string | null): NodeEngineView {
  const e = engineOf(compiledFor);
  return { family: e.family, version: e.version, ...e.capabilities, sniffing: [...e.capabilities.sniffing] };
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
  apply_failed_revision: r.apply_failed_revision === null ? null : Number(r.apply_failed_revision),
  apply_failing_since: r.apply_failing_since?.toISOString() ?? null,
  engine: engineView(r.compiled_engine_version),
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
  agent_upgrade_available: agentUpgradeAvailable(r.agent_version, AGENT_RELEASE) ? AGENT_RELEASE : null,
  agent_upgrade: agentUpgradeView(r),
  traffic_multiplier: Number(r.traffic_multiplier),
  traffic_quota_bytes: r.traffic_quota_bytes === null ? null : Number(r.traffic_quota_bytes),
  traffic_quota_renewal: r.traffic_quota_renewal,
  traffic: nodeTrafficView(r),
  enforcement: enforcementView(r.enforcement),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
