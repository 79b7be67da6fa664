import type { DomainDeps } from '../shared/context.ts';

export interface ApplyOutcome {
  revision: number;
  success: boolean;
  error: string;
}

/**
 * ApplyResult (spec 3.5): a success moves applied_revision (never backwards) and clears the
 * error; a failure keeps the applied revision and records the agent's error text. Neither
 * ends the stream.
 */
export async function recordApplyResult(deps: Pick<DomainDeps, 'db' | 'clock'>, nodeId: string, r: ApplyOutcome): Promise<void> {
  const now = deps.clock.now();
  if (r.success) {
    await deps.db
      .updateTable('nodes')
      .set((eb) => ({
        applied_revision: eb.fn('greatest', [eb.ref('applied_revision'), eb.val(Math.max(0, r.revision))]),
        last_apply_error: null,
        last_apply_at: now,
        last_seen_at: now,
      }))
      .where('id', '=', nodeId)
      .execute();
    return;
  }
  await deps.db
    .updateTable('nodes')
    .set({
      last_apply_error: `revision ${r.revision}: ${r.error.slice(0, 4000) || 'failed without an error text'}`,
      last_apply_at: now,
      last_seen_at: now,
    })
    .where('id', '=', nodeId)
    .execute();
}

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
}

const finite = (n: number) => (Number.isFinite(n) ? n : 0);

export async function recordStatusReport(deps: Pick<DomainDeps, 'db' | 'clock'>, nodeId: string, s: AgentStatus): Promise<void> {
  const now = deps.clock.now();
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
  await deps.db
    .updateTable('nodes')
    .set({ status: JSON.stringify({ ...status, reported_at: now.toISOString() }), last_status_at: now, last_seen_at: now })
    .where('id', '=', nodeId)
    .execute();
}
