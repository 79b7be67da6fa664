import { bumpNodeRevisions, JOBS, TOPICS, unitOfWork } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const revisionOf = async (id: string) =>
  Number(
    (await bed.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision,
  );
const auditOf = (action: string) => bed.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).execute();
const announced = () => (bed.published(TOPICS.nodesChanged) as Array<{ ids: string[] }>).flatMap((m) => m.ids);

describe('the unit of work: what a change causes happens after its commit, and only then', () => {
  it('a revision bump is announced on nodes.changed once the transaction has committed, not before', async () => {
    const node = await fixtures(bed.ctx()).node({ name: 'uow-announce' });
    let seenInside: string[] = [];
    await unitOfWork(bed.deps, async (uow) => {
      await bumpNodeRevisions(uow, [node.id]);
      seenInside = announced();
    });
    expect(seenInside).not.toContain(node.id);
    expect(announced()).toContain(node.id);
    expect(await revisionOf(node.id)).toBe(node.desired_revision + 1);
  });

  it('a rolled-back unit bumps nothing, announces nothing, audits nothing, enqueues nothing, runs no callback', async () => {
    const node = await fixtures(bed.ctx()).node({ name: 'uow-rollback' });
    const enqueued: unknown[] = [];
    const stop = await bed.deps.jobs.consume(JOBS.enforceLimits, async (data) => {
      enqueued.push(data);
    });
    let called = false;
    const failed = await unitOfWork(bed.ctx(), async (uow) => {
      await bumpNodeRevisions(uow, [node.id]);
      uow.audit({ action: 'uow.test_rolled_back', entity_type: 'node', entity_id: node.id });
      uow.subscriptionLinksChanged();
      uow.publish(TOPICS.settingsChanged, { key: 'uow-test' });
      uow.enqueue(JOBS.enforceLimits, { ids: ['sub_rolled_back'] });
      uow.afterCommit(() => {
        called = true;
      });
      throw new Error('refused');
    }).catch((err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 50));
    await stop();
    expect(failed).toBe('refused');
    expect(await revisionOf(node.id)).toBe(node.desired_revision);
    expect(announced()).not.toContain(node.id);
    expect(await auditOf('uow.test_rolled_back')).toHaveLength(0);
    expect(bed.published(TOPICS.settingsChanged)).not.toContainEqual({ key: 'uow-test' });
    expect(enqueued).toHaveLength(0);
    expect(called).toBe(false);
  });

  it("audit entries are written inside the unit's transaction, by its actor, in the order they were left", async () => {
    const ctx = bed.ctx({ type: 'admin', id: 'adm_auditor', role: 'admin', ip: '192.0.2.7' });
    await unitOfWork(ctx, async (uow) => {
      uow.audit({ action: 'uow.test_first', entity_type: 'thing', entity_id: 'x1' });
      uow.audit({ action: 'uow.test_second', entity_type: 'thing', entity_id: 'x2', details: { n: 2 } });
      uow.audit({ action: 'uow.test_third' }, { type: 'node', id: 'nod_other', ip: null });
    });
    const rows = await bed.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', 'in', ['uow.test_first', 'uow.test_second', 'uow.test_third'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.actor_type, r.actor_id, r.ip])).toEqual([
      ['uow.test_first', 'admin', 'adm_auditor', '192.0.2.7'],
      ['uow.test_second', 'admin', 'adm_auditor', '192.0.2.7'],
      ['uow.test_third', 'node', 'nod_other', null],
    ]);
  });

  it('after commit: nodes.changed, then subscriptions.changed, then events, then callbacks (which see them sent and the change committed); jobs are handed over; a failing callback undoes nothing', async () => {
    const handed: unknown[] = [];
    const stop = await bed.deps.jobs.consume(JOBS.enforceLimits, async (data) => {
      handed.push(data);
    });
    const node = await fixtures(bed.ctx()).node({ name: 'uow-after' });
    const from = bed.publications().length;
    const seenByCallback: string[] = [];
    const result = await unitOfWork(bed.deps, async (uow) => {
      uow.afterCommit(() => {
        throw new Error('a callback that fails');
      });
      uow.afterCommit(async () => {
        seenByCallback.push(
          ...bed
            .publications()
            .slice(from)
            .map((p) => p.topic),
        );
        // Committed: another connection sees the bump.
        seenByCallback.push(`revision ${await revisionOf(node.id)}`);
      });
      uow.publish(TOPICS.settingsChanged, { key: 'uow-order' });
      uow.enqueue(JOBS.enforceLimits, { ids: ['sub_after_commit'] });
      uow.subscriptionLinksChanged();
      await bumpNodeRevisions(uow, [node.id]);
      return 'done';
    });
    for (let i = 0; i < 500 && handed.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await stop();
    expect(result).toBe('done');
    const expected = [TOPICS.nodesChanged, TOPICS.subscriptionsChanged, TOPICS.settingsChanged];
    expect(
      bed
        .publications()
        .slice(from)
        .map((p) => p.topic),
    ).toEqual(expected);
    expect(seenByCallback).toEqual([...expected, `revision ${node.desired_revision + 1}`]);
    expect(handed).toEqual([{ ids: ['sub_after_commit'] }]);
  });

  it('with attempts, a unit that lost a serialization conflict runs again from scratch and its consequences happen once', async () => {
    const node = await fixtures(bed.ctx()).node({ name: 'uow-retry' });
    let runs = 0;
    await unitOfWork(
      bed.deps,
      async (uow) => {
        runs++;
        await bumpNodeRevisions(uow, [node.id]);
        uow.audit({ action: 'uow.test_retried', entity_id: node.id });
        if (runs === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      },
      { attempts: 3 },
    );
    expect(runs).toBe(2);
    expect(await revisionOf(node.id)).toBe(node.desired_revision + 1);
    expect((await auditOf('uow.test_retried')).filter((r) => r.entity_id === node.id)).toHaveLength(1);
    expect(announced().filter((id) => id === node.id)).toHaveLength(1);
  });

  it('a read-only unit refuses writes', async () => {
    const err = await unitOfWork(bed.deps, (uow) => uow.db.deleteFrom('audit_log').execute(), { readOnly: true }).catch(
      (e: { code?: string }) => e,
    );
    expect((err as { code?: string }).code).toBe('25006'); // read_only_sql_transaction
  });
});

describe('passing a unit of work on', () => {
  it('a unit given an open unit joins it: one transaction, and its consequences wait for the outer commit', async () => {
    const node = await fixtures(bed.ctx()).node({ name: 'uow-join' });
    let announcedBeforeOuterCommit = true;
    const failed = await unitOfWork(bed.deps, async (outer) => {
      await unitOfWork(outer, async (inner) => {
        expect(inner).toBe(outer);
        await bumpNodeRevisions(inner, [node.id]);
        inner.audit({ action: 'uow.test_joined', entity_id: node.id });
      });
      announcedBeforeOuterCommit = announced().includes(node.id);
      throw new Error('the outer unit fails after the inner one finished');
    }).catch((err: Error) => err.message);
    expect(failed).toMatch(/outer unit fails/);
    expect(announcedBeforeOuterCommit).toBe(false);
    expect(announced()).not.toContain(node.id);
    expect(await revisionOf(node.id)).toBe(node.desired_revision);
    expect(await auditOf('uow.test_joined')).toHaveLength(0);
  });
});
