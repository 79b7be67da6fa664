import { type AgentStatus, type ApplyRecovery, recordAppliedRevisions, recordStatusReports, type UnitOfWorkDeps } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';

const MAX_BATCH = 500;
const STATUS_LINGER_MS = 100;

/**
 * Records successful ApplyResults, gathering those that arrive in the same turn of the event
 * loop into one statement: after a change to an access group shared by 1,000 nodes, their
 * results arrive within a second, and 1,000 single-row UPDATEs would compete with the
 * snapshots still being read for the same database pool. The returned promise settles when
 * the node's row is written (or the batch failed), with the failure it cleared, if any.
 */
export function appliedRevisionWriter(deps: UnitOfWorkDeps): (nodeId: string, revision: number) => Promise<ApplyRecovery | undefined> {
  // One fresh row per result: two results of a node in one turn both reach the statement,
  // which keeps the higher revision.
  const write = createTurnBatcher<{ node_id: string; revision: number }, ApplyRecovery | undefined>({
    maxBatch: MAX_BATCH,
    // Each agent's result arrives in its own turn: with no bound, a fan-out to 10,000 nodes
    // became ~10,000 one-row statements (a profile of the 1,000-node fan-out had 15% of the
    // gateway's time in writes to PostgreSQL). Results arriving while two statements run go
    // together in the next.
    maxInFlight: 2,
    run: async (rows) => {
      const recovered = new Map((await recordAppliedRevisions(deps, rows)).map((r) => [r.node_id, r]));
      return (row) => recovered.get(row.node_id);
    },
  });
  return (node_id, revision) => write({ node_id, revision });
}

/**
 * Records StatusReports the same way: every agent sends one as its stream opens, so a
 * reconnecting fleet's reports come in thousands within seconds (issue 17.3), and one every 30 s
 * after that: ~330 a second from 10,000 agents, arriving one or two a turn. Those wait up to
 * STATUS_LINGER_MS for others (issue 37.3: the 10,000-node fan-out's profile counted 36,505
 * statements of ~1.6 rows). A report is a heartbeat nobody reads to the millisecond; the wait
 * holds back only that stream's next message.
 */
export function statusReportWriter(deps: UnitOfWorkDeps): (nodeId: string, status: AgentStatus) => Promise<void> {
  const write = createTurnBatcher<{ node_id: string; status: AgentStatus }, void>({
    maxBatch: MAX_BATCH,
    // Reports arriving while two statements run go together in the next (one per turn would
    // still be about one per stream in a storm: each Hello arrives in its own turn).
    maxInFlight: 2,
    lingerMs: STATUS_LINGER_MS,
    run: async (rows) => {
      await recordStatusReports(deps, rows);
      return () => undefined;
    },
  });
  return (node_id, status) => write({ node_id, status });
}
