import { sql } from 'kysely';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { engineOf, sameCapabilities } from './engine-capabilities.ts';

/** The engine an opening stream's agent reports (Hello.xray_version), with the certificate it came with. */
export interface EngineReport {
  node_id: string;
  /** Serial of the stream's client certificate: only the node's own identity may change its engine. */
  serial: string;
  xray_version: string;
}

/**
 * Before a stream is admitted: a node whose agent reports an engine that compiles differently
 * from the one its desired state is compiled for (nodes.compiled_engine_version) adopts it with
 * a new revision, so the agent is sent a state its engine runs (an Xray node replaced by V2Ray,
 * an engine upgraded past a capability). The engine is read by the snapshot with the revision it
 * was adopted with: a revision always compiles alike (packages/desired-state).
 *
 * One SELECT for any number of reports when nothing changes (every reconnect of a fleet); only
 * the nodes that change take a unit of work, which checks again under the rows' locks. Nodes
 * that are disabled, gone or not on this certificate are left alone (the admission refuses
 * them). Returns the new desired revision of each node that adopted its engine.
 */
export async function adoptEngines(deps: UnitOfWorkDeps, reports: readonly EngineReport[]): Promise<Map<string, number>> {
  const adopted = new Map<string, number>();
  if (reports.length === 0) return adopted;
  // Kept as the admission keeps Hello's text: trimmed, at most 64 characters.
  const latest = new Map(reports.map((r) => [r.node_id, { ...r, xray_version: r.xray_version.trim().slice(0, 64) }]));
  const changing = await changedEngines(deps.db, [...latest.values()]);
  if (changing.length === 0) return adopted;
  await retryOnConflict(() =>
    unitOfWork(deps, async (uow) => {
      adopted.clear();
      const ids = (await changedEngines(uow.db, changing, true)).map((r) => r.node_id);
      if (ids.length === 0) return;
      const versions = ids.map((id) => (latest.get(id) as EngineReport).xray_version);
      await sql`
        update nodes n set compiled_engine_version = v.version
          from unnest(${ids}::text[], ${versions}::text[]) as v(id, version)
         where n.id = v.id`.execute(uow.db);
      await bumpNodeRevisions(uow, ids);
      const rows = await uow.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
      for (const r of rows) adopted.set(r.id, Number(r.desired_revision));
    }),
  );
  return adopted;
}

/** The reports whose node is enabled, on this certificate, and compiled for other capabilities (locked in id order with `lock`). */
async function changedEngines(db: UnitOfWorkDeps['db'], reports: readonly EngineReport[], lock = false): Promise<EngineReport[]> {
  const ids = reports.map((r) => r.node_id).sort();
  let q = db
    .selectFrom('nodes')
    .select(['id', 'admin_status', 'cert_serial', 'cert_previous_serial', 'compiled_engine_version'])
    .where('id', 'in', ids)
    .orderBy('id');
  if (lock) q = q.forUpdate();
  const rows = new Map((await q.execute()).map((r) => [r.id, r]));
  return reports.filter((r) => {
    const row = rows.get(r.node_id);
    if (!row || row.admin_status !== 'enabled') return false;
    if (row.cert_serial !== r.serial && row.cert_previous_serial !== r.serial) return false;
    return !sameCapabilities(engineOf(row.compiled_engine_version).capabilities, engineOf(r.xray_version).capabilities);
  });
}
