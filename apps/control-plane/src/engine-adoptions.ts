import { adoptEngines, type EngineReport, type UnitOfWorkDeps } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';

const MAX_BATCH = 250;

/**
 * adoptEngines for opening streams, gathering the reports of one turn into one statement, and
 * those that arrive while two run into the next: a reconnecting fleet reports unchanged engines,
 * which costs one SELECT per batch. Resolves with the node's new desired revision when its
 * engine was adopted (a DesiredState compiled for it must be sent), else null.
 */
export function engineAdopter(deps: UnitOfWorkDeps): (report: EngineReport) => Promise<number | null> {
  return createTurnBatcher<EngineReport, number | null>({
    maxBatch: MAX_BATCH,
    maxInFlight: 2,
    run: async (reports) => {
      const adopted = await adoptEngines(deps, reports);
      return (r) => adopted.get(r.node_id) ?? null;
    },
  });
}
