import { sql } from 'kysely';
import { type EnforcementReport, storedEnforcement } from '../limits/enforcement.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import type { UnitOfWorkDeps } from '../shared/unit-of-work.ts';

/** StatusReport (spec 2.1), stored as the node view's `status`, snake_case. */
export interface AgentStatus {
  xray_running: boolean;
  cpu_percent: number;
  memory_used_bytes: number;
  memory_total_bytes: number;
  disk_used_bytes: number;
  disk_total_bytes: number;
  connections: number;
  xray_uptime_seconds: number;
  /**
   * Issue 36: StatusReport.enforcement; null or absent when the agent sent none (an older
   * agent: it enforces no limits). Stored apart from the status (nodes.enforcement).
   */
  enforcement?: EnforcementReport | null;
}

const finite = (n: number) => (Number.isFinite(n) ? n : 0);

export async function recordStatusReport(deps: UnitOfWorkDeps, nodeId: string, s: AgentStatus): Promise<void> {
  await recordStatusReports(deps, [{ node_id: nodeId, status: s }]);
}

/**
 * Status reports of several nodes in one statement (issue 17.3: every agent sends one as its
 * stream opens, so a reconnecting fleet sent thousands of single-row UPDATEs competing with the
 * admissions for the pool). Of two reports of one node, the later one is stored.
 */
export async function recordStatusReports(
  deps: UnitOfWorkDeps,
  reports: ReadonlyArray<{ node_id: string; status: AgentStatus }>,
): Promise<void> {
  if (reports.length === 0) return;
  const now = deps.clock.now();
  const latest = new Map<string, string>();
  const enforcement = new Map<string, string | null>();
  for (const { node_id, status: s } of reports) {
    enforcement.set(node_id, s.enforcement ? JSON.stringify(storedEnforcement(s.enforcement, now)) : null);
    const status: AgentStatus = {
      xray_running: s.xray_running,
      cpu_percent: Math.round(finite(s.cpu_percent) * 100) / 100,
      memory_used_bytes: finite(s.memory_used_bytes),
      memory_total_bytes: finite(s.memory_total_bytes),
      disk_used_bytes: finite(s.disk_used_bytes),
      disk_total_bytes: finite(s.disk_total_bytes),
      connections: finite(s.connections),
      xray_uptime_seconds: finite(s.xray_uptime_seconds),
    };
    latest.set(node_id, JSON.stringify({ ...status, reported_at: now.toISOString() }));
  }
  // One statement, no transaction around it: the rows locked in id order first (as
  // lockNodesInOrder locks them: no deadlock against a revision bump), then written. A fleet of
  // 10,000 sends ~330 reports a second, batched a few at a time: begin, lock, update and commit
  // were four round trips a batch (the 10,000-node fan-out's profile: the gateway's writes to
  // PostgreSQL 8% of its time, the lock statement the first of PostgreSQL's).
  const ids = [...latest.keys()].sort();
  const statuses = ids.map((id) => latest.get(id) as string);
  const enforcements = ids.map((id) => enforcement.get(id) ?? null);
  await retryOnConflict(() =>
    sql`
    with locked as (select id from nodes where id = any(${ids}::text[]) order by id for update)
    update nodes n
       set status = v.status::jsonb,
           enforcement = v.enforcement::jsonb,
           last_status_at = ${now},
           last_seen_at = ${now}
      from unnest(${ids}::text[], ${statuses}::text[], ${enforcements}::text[]) as v(id, status, enforcement), locked l
     where n.id = v.id and l.id = v.id`.execute(deps.db),
  );
}
