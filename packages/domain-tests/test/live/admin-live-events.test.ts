import {
  type AdminLiveEvent,
  closeAgentStream,
  createClient,
  recordAppliedRevisions,
  recordApplyFailure,
  TOPICS,
  unitOfWork,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What the admin panel hears (issue 30.5, AdminLiveEvent on admin.events): node views that
 * changed without a change to what the node runs, and the entity types every committed write
 * audited; nothing from a unit that rolled back.
 */
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const heard = () => bed.published(TOPICS.adminEvents) as AdminLiveEvent[];
const nodesHeard = () => heard().flatMap((e) => (e.type === 'nodes' ? e.ids : []));
const entitiesHeard = () => heard().flatMap((e) => (e.type === 'changed' ? e.entities : []));

describe('admin live events', () => {
  it('a committed write announces the entity types it audited; a rolled-back one announces nothing', async () => {
    const before = heard().length;
    await createClient(bed.ctx(), { email: 'live-events@example.com' } as never);
    expect(entitiesHeard()).toContain('client');
    const count = heard().length;
    await unitOfWork(bed.ctx(), async (uow) => {
      uow.audit({ action: 'live.rolled_back', entity_type: 'plan' });
      throw new Error('refused');
    }).catch(() => {});
    expect(heard().length).toBe(count);
    expect(count).toBeGreaterThan(before);
  });

  it('applied revisions and apply failures announce the nodes whose view changed', async () => {
    const a = await fixtures(bed.ctx()).node({ name: 'live-applied' });
    const b = await fixtures(bed.ctx()).node({ name: 'live-failed' });
    await recordAppliedRevisions(bed.deps, [{ node_id: a.id, revision: a.desired_revision }]);
    expect(nodesHeard()).toContain(a.id);
    await recordApplyFailure(bed.deps, b.id, { revision: b.desired_revision, error: 'engine refused' });
    expect(nodesHeard()).toContain(b.id);
  });

  it('a stream that ends announces its node only when it was still the current one', async () => {
    const n = await fixtures(bed.ctx()).node({ name: 'live-stream' });
    await bed.deps.db
      .updateTable('nodes')
      .set({ connectivity: 'online', stream_session: 'ses-live', stream_replica: 'gw-live' })
      .where('id', '=', n.id)
      .execute();
    const before = nodesHeard().filter((id) => id === n.id).length;
    await closeAgentStream(bed.deps, { node_id: n.id, session: 'ses-other' } as never);
    expect(nodesHeard().filter((id) => id === n.id).length).toBe(before);
    await closeAgentStream(bed.deps, { node_id: n.id, session: 'ses-live' } as never);
    expect(nodesHeard().filter((id) => id === n.id).length).toBe(before + 1);
  });
});
