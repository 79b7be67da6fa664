import {
  type CutoffEntry,
  grantTrafficSlices,
  ingestCutoffReport,
  parseInput,
  readTrafficSlices,
  UpdateSubscriptionInput,
  unitOfWork,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { bumpsOf } from '../support.ts';

// Issue 36: CutoffReport exactly once per (node, report_id), and the reconciliation after a cut
// (packages/domain/src/limits/cutoff-ingest.ts).

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(async () => {
  await bed.close();
});

const DAY = 86_400_000;
const grant = (node: string) => unitOfWork(bed.deps, (uow) => grantTrafficSlices(uow, [node], bed.deps.clock.now()));
const sliceOf = async (node: string, sub: string) => (await readTrafficSlices(bed.deps, [node])).find((s) => s.subscription_id === sub);
const cut = (subscription_id: string, reason: CutoffEntry['reason'], slice_id = 0n, used = 0n): CutoffEntry => ({
  subscription_id,
  reason,
  at_ms: BigInt(bed.deps.clock.now().getTime()),
  slice_id,
  slice_used_bytes: used,
});
const cutoffsOf = (node: string) => bed.deps.db.selectFrom('node_cutoffs').selectAll().where('node_id', '=', node).execute();
const eventsOf = async (sub: string) =>
  (await bed.deps.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'subscription.cut_off_by_node').execute()).filter(
    (e) => (e.payload as { subscription_id: string }).subscription_id === sub,
  );

describe('ingestCutoffReport', () => {
  it('records a report once: a replayed or older report_id changes nothing (the caller acknowledges both)', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({
      access_group_ids: groups,
      expires_at: new Date(bed.deps.clock.now().getTime() + DAY),
    });
    const first = await ingestCutoffReport(bed.deps, node, { report_id: 5n, entries: [cut(sub.id, 'time')] });
    expect(first).toMatchObject({ applied: true, recorded: 1, invalid: 0 });
    for (const report_id of [5n, 4n]) {
      const again = await ingestCutoffReport(bed.deps, node, { report_id, entries: [cut(sub.id, 'time')] });
      expect(again).toMatchObject({ applied: false, recorded: 0 });
    }
    expect(await cutoffsOf(node)).toHaveLength(1);
    const events = await eventsOf(sub.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({ subscription_id: sub.id, node_id: node, reason: 'time', slice_id: 0 });
  });

  it('entries that can name no subscription or give no reason are dropped; the report still applies', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
    const result = await ingestCutoffReport(bed.deps, node, {
      report_id: 1n,
      entries: [cut(sub.id, 'unknown'), cut('', 'time'), cut('bad\u0000id', 'slice'), cut(sub.id, 'slice', -1n), cut('sub_gone', 'time')],
    });
    expect(result).toMatchObject({ applied: true, recorded: 1, invalid: 4 });
    // A cut of a subscription that does not exist is kept on the node, without an event.
    expect((await cutoffsOf(node)).map((c) => c.subscription_id)).toEqual(['sub_gone']);
  });

  it('a slice cut with traffic left gets a fresh slice (new id, new revision); a cut of a slice already replaced gets none', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 5_000_000 });
    await grant(node);
    const slice = await sliceOf(node, sub.id);
    const bumps = await bumpsOf(bed, [node], () =>
      ingestCutoffReport(bed.deps, node, { report_id: 1n, entries: [cut(sub.id, 'slice', BigInt(slice?.slice_id ?? 0), 5_000_000n)] }),
    );
    expect(bumps).toEqual({ [node]: 1 });
    const fresh = await sliceOf(node, sub.id);
    expect(BigInt(fresh?.slice_id ?? 0)).toBeGreaterThan(BigInt(slice?.slice_id ?? 0));
    // The old slice reported again under a new report id: a newer slice is in force already.
    const stale = await bumpsOf(bed, [node], () =>
      ingestCutoffReport(bed.deps, node, { report_id: 2n, entries: [cut(sub.id, 'slice', BigInt(slice?.slice_id ?? 0), 5_000_000n)] }),
    );
    expect(stale).toEqual({ [node]: 0 });
    expect((await sliceOf(node, sub.id))?.slice_id).toBe(fresh?.slice_id);
  });

  it('a time cut of a subscription extended meanwhile gives the node a new revision; of an expired one, nothing', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const now = bed.deps.clock.now().getTime();
    const extended = await f.subscription({ access_group_ids: groups, expires_at: new Date(now + DAY) });
    await updateSubscription(
      bed.ctx(),
      extended.id,
      parseInput(UpdateSubscriptionInput, { expires_at: new Date(now + 30 * DAY).toISOString() }),
    );
    expect(
      await bumpsOf(bed, [node], () => ingestCutoffReport(bed.deps, node, { report_id: 1n, entries: [cut(extended.id, 'time')] })),
    ).toEqual({
      [node]: 1,
    });
    const ending = await f.subscription({ access_group_ids: groups, expires_at: new Date(now + 1000) });
    bed.clock.advance(2000);
    expect(
      await bumpsOf(bed, [node], () => ingestCutoffReport(bed.deps, node, { report_id: 2n, entries: [cut(ending.id, 'time')] })),
    ).toEqual({
      [node]: 0,
    });
  });
});
