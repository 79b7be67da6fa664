// Checked by `tsc` (pnpm typecheck), never run: each line marked @ts-expect-error must stay a
// type error. If one compiles, tsc reports the unused directive and CI fails.
import type { Db } from '@svc/db';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { UnitOfWork, type UnitOfWorkDeps, unitOfWork } from './unit-of-work.ts';

declare const trx: Db;
declare const deps: UnitOfWorkDeps;

export async function revisionBumpsNeedAUnitOfWork(): Promise<void> {
  // @ts-expect-error a bare transaction is not a unit of work: nobody would announce the bumped nodes after commit
  await bumpNodeRevisions(trx, ['nod_1']);

  // @ts-expect-error the database handle is not a unit of work either
  await bumpNodeRevisions(deps.db, ['nod_1']);

  // @ts-expect-error something shaped like a unit of work is not one (its state is private to the class)
  await bumpNodeRevisions({ db: trx, actor: { type: 'system', id: null }, nodesChanged: () => {} }, ['nod_1']);

  // @ts-expect-error a UnitOfWork is opened by unitOfWork() alone: its key is not exported
  new UnitOfWork(Symbol('unit-of-work.open'), trx, deps);

  // The one way: inside unitOfWork, whose commit announces what was bumped.
  await unitOfWork(deps, (uow) => bumpNodeRevisions(uow, ['nod_1']));
}
