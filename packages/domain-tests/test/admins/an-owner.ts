import type { Actor, AdminView, DomainContext } from '@svc/domain';
import { type DomainTestbed, fixtures } from '@svc/testkit';

export const actorOf = (admin: AdminView): Actor => ({ type: 'admin', id: admin.id, role: admin.role });

/** An owner who exists (managing admins re-reads the actor's role), and a context acting as them. */
export async function anOwner(bed: DomainTestbed): Promise<{ owner: AdminView; asOwner: DomainContext }> {
  const owner = await fixtures(bed.ctx()).admin({ role: 'owner' });
  return { owner, asOwner: bed.ctx(actorOf(owner)) };
}
