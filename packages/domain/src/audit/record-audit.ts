import type { Actor } from '../shared/context.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import type { AuditEntry } from './write-audit.ts';

/** An audit entry that is the whole change (an authentication failure, a command sent): its own unit of work. */
export async function recordAudit(deps: UnitOfWorkDeps & { actor: Actor }, entry: AuditEntry): Promise<void> {
  await unitOfWork(deps, async (uow) => uow.audit(entry));
}
