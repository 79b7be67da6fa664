import { readSlices } from '@svc/desired-state';
import {
  foldUsageInbox,
  grantTrafficSlices,
  ingestUsageReport,
  mayBeDueSlices,
  parseInput,
  readTrafficSlices,
  SLICE_FLOOR_BYTES,
  sliceBytes,
  stageUsageReport,
  UpdateNodeInput,
  unitOfWork,
  updateNode,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { bumpsOf } from '../support.ts';

// Issue 36: traffic slices (packages/domain/src/limits/traffic-slices.ts), the rule at the verb.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(async () => {
  await bed.close();
});

const GIB = 2 ** 30;
const grant = (nodes: string[], options?: Parameters<typeof grantTrafficSlices>[3]) =>
  unitOfWork(bed.deps, (uow) => grantTrafficSlices(uow, nodes, bed.deps.clock.now(), options));
const sliceOf = async (node: string, sub: string) => (await readTrafficSlices(bed.deps, [node])).find((s) => s.subscription_id === sub);
const used = async (sub: string) =>
  Number(
    (
      await bed.deps.db
        .selectFrom('subscription_counters')
        .select('used_bytes')
        .where('subscription_id', '=', sub)
        .executeTakeFirstOrThrow()
    ).used_bytes,
  );
const entry = (subscription_id: string, bytes: number) => ({ subscription_id, uplink_bytes: BigInt(bytes), downlink_bytes: 0n });

describe('sliceBytes: the lesser of what remains (raw) and a day of expected use, never more than remains', () => {
  it('takes a day of use, at least the floor, and never more than remains', () => {
    const base = { traffic_limit_bytes: 100 * GIB, used_bytes: 0, multiplier: 1 };
    expect(sliceBytes({ ...base, day_raw_bytes: 0 })).toBe(SLICE_FLOOR_BYTES);
    expect(sliceBytes({ ...base, day_raw_bytes: 3 * GIB })).toBe(3 * GIB);
    expect(sliceBytes({ ...base, used_bytes: 100 * GIB - 1000, day_raw_bytes: 3 * GIB })).toBe(1000);
    expect(sliceBytes({ ...base, used_bytes: 101 * GIB, day_raw_bytes: 3 * GIB })).toBe(0);
  });

  it('counts what remains in the node raw bytes (charged = raw x multiplier); a node of multiplier 0 gets no slice', () => {
    const base = { traffic_limit_bytes: 1001, used_bytes: 0, day_raw_bytes: 0 };
    expect(sliceBytes({ ...base, multiplier: 2 })).toBe(500);
    expect(sliceBytes({ ...base, multiplier: 0.5 })).toBe(2002);
    expect(sliceBytes({ ...base, multiplier: 0 })).toBeNull();
  });
});

describe('grantTrafficSlices', () => {
  it('gives each served subscription with a traffic limit one slice with its own id, bumps the node once, and is then quiet', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const f = fixtures(bed.ctx());
    const small = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 1_000_000 });
    const big = await f.subscription({ access_group_ids: groups, traffic_limit_bytes: 100 * GIB });
    const free = await f.subscription({ access_group_ids: groups });
    const bumps = await bumpsOf(bed, [node], () => grant([node]));
    expect(bumps).toEqual({ [node]: 1 });
    const a = await sliceOf(node, small.id);
    const b = await sliceOf(node, big.id);
    expect(Number(a?.slice_bytes)).toBe(1_000_000);
    expect(Number(b?.slice_bytes)).toBe(SLICE_FLOOR_BYTES);
    expect(a?.slice_id).not.toBe(b?.slice_id);
    expect(await sliceOf(node, free.id)).toBeUndefined();
    expect(await bumpsOf(bed, [node], () => grant([node]))).toEqual({ [node]: 0 });
  });

  it('on a node of multiplier 2 the slice is half of what remains (raw bytes)', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    await updateNode(bed.ctx(), node, parseInput(UpdateNodeInput, { traffic_multiplier: 2 }));
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 1_000_001 });
    await grant([node]);
    expect(Number((await sliceOf(node, sub.id))?.slice_bytes)).toBe(500_000);
  });

  it('the usage ingest counts raw bytes against the slice and grants the next one past half, sized by the last day of use', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 * GIB });
    await grant([node]);
    const first = await sliceOf(node, sub.id);
    // Under half: counted, no new slice, no new revision.
    expect(await bumpsOf(bed, [node], () => ingestUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 1000)] }))).toEqual({
      [node]: 0,
    });
    expect(await sliceOf(node, sub.id)).toMatchObject({ slice_id: first?.slice_id, used_bytes: '1000' });
    // Past half: a new slice (a higher id) of a day's use, 2 GiB, counted from zero.
    expect(
      await bumpsOf(bed, [node], () => ingestUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 2 * GIB)] })),
    ).toEqual({ [node]: 1 });
    const next = await sliceOf(node, sub.id);
    expect(BigInt(next?.slice_id ?? 0)).toBeGreaterThan(BigInt(first?.slice_id ?? 0));
    expect(Number(next?.slice_bytes)).toBe(2 * GIB + 1000);
    expect(next?.used_bytes).toBe('0');
  });

  it('staged reports folded together count their raw bytes against the slice once each, and past half the fold grants the next one', async () => {
    const { node, groups } = await servedNode(bed.ctx());
    const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups, traffic_limit_bytes: 100 * GIB });
    await grant([node]);
    const first = await sliceOf(node, sub.id);
    // Two reports, one fold: the sum counted, under half.
    await stageUsageReport(bed.deps, node, { report_id: 1n, entries: [entry(sub.id, 600)] });
    await stageUsageReport(bed.deps, node, { report_id: 2n, entries: [entry(sub.id, 400)] });
    expect(await bumpsOf(bed, [node], () => foldUsageInbox(bed.deps))).toEqual({ [node]: 0 });
    expect(await sliceOf(node, sub.id)).toMatchObject({ slice_id: first?.slice_id, used_bytes: '1000' });
    // Past half over two reports: one new slice, the node one new revision.
    await stageUsageReport(bed.deps, node, { report_id: 3n, entries: [entry(sub.id, GIB)] });
    await stageUsageReport(bed.deps, node, { report_id: 4n, entries: [entry(sub.id, GIB)] });
    expect(await bumpsOf(bed, [node], () => foldUsageInbox(bed.deps))).toEqual({ [node]: 1 });
    const next = await sliceOf(node, sub.id);
    expect(BigInt(next?.slice_id ?? 0)).toBeGreaterThan(BigInt(first?.slice_id ?? 0));
    expect(next?.used_bytes).toBe('0');
    expect(await used(sub.id)).toBe(2 * GIB + 1000);
  });

  it('a partition overspends at most the slices outstanding: two nodes each carry their whole slice before reporting', async () => {
    const ctx = bed.ctx();
    const a = await servedNode(ctx);
    const b = await servedNode(ctx);
    const LIMIT = 3_000_000;
    const sub = await fixtures(ctx).subscription({ access_group_ids: [...a.groups, ...b.groups], traffic_limit_bytes: LIMIT });
    await ingestUsageReport(bed.deps, a.node, { report_id: 1n, entries: [entry(sub.id, 1_000_000)] });
    await grant([a.node, b.node]);
    const slices = [await sliceOf(a.node, sub.id), await sliceOf(b.node, sub.id)].map((s) => Number(s?.slice_bytes));
    // Each slice is at most what remained when it was granted.
    for (const s of slices) expect(s).toBeLessThanOrEqual(LIMIT - 1_000_000);
    const outstanding = slices.reduce((x, y) => x + y, 0);
    const before = await used(sub.id);
    // The control plane away: each node cuts the user at its slice, then reports everything it carried.
    await ingestUsageReport(bed.deps, a.node, { report_id: 2n, entries: [entry(sub.id, slices[0] as number)] });
    await ingestUsageReport(bed.deps, b.node, { report_id: 1n, entries: [entry(sub.id, slices[1] as number)] });
    const after = await used(sub.id);
    expect(after - before).toBeLessThanOrEqual(outstanding);
    expect(after - LIMIT).toBeLessThanOrEqual(outstanding - (LIMIT - before));
    // Nothing remains: no node gets another slice.
    expect(await grant([a.node, b.node])).toEqual([]);
  });

  it('mayBeDueSlices, what a snapshot shows, names every subscription grantTrafficSlices grants; the grant leaves out only those past their limit', async () => {
    const ctx = bed.ctx();
    const a = await servedNode(ctx);
    const b = await servedNode(ctx);
    // Node b charges nothing: no slice there, whatever its members are.
    await updateNode(ctx, b.node, parseInput(UpdateNodeInput, { traffic_multiplier: 0 }));
    const LIMIT = 10 * GIB;
    const cases: Array<{ id: string; limit: boolean; expired: boolean; slice: 'none' | 'fresh' | 'half'; reached: boolean }> = [];
    for (const limit of [true, false])
      for (const expired of [false, true])
        for (const slice of ['none', 'fresh', 'half'] as const)
          for (const reached of [false, true]) {
            const sub = await fixtures(ctx).subscription({
              access_group_ids: [...a.groups, ...b.groups],
              ...(limit ? { traffic_limit_bytes: LIMIT } : {}),
            });
            cases.push({ id: sub.id, limit, expired, slice, reached });
          }
    await grant([a.node, b.node]);
    // Then each case's state, written behind the verbs' backs (what a snapshot may meet).
    const db = bed.deps.db;
    const now = bed.deps.clock.now();
    for (const c of cases) {
      if (c.expired)
        await db
          .updateTable('subscriptions')
          .set({ expires_at: new Date(now.getTime() - 1000) })
          .where('id', '=', c.id)
          .execute();
      if (c.reached) await db.updateTable('subscription_counters').set({ used_bytes: LIMIT }).where('subscription_id', '=', c.id).execute();
      if (c.slice === 'none') await db.deleteFrom('traffic_slices').where('subscription_id', '=', c.id).execute();
      if (c.slice === 'half')
        await db
          .updateTable('traffic_slices')
          .set((eb) => ({ used_bytes: eb.ref('slice_bytes') }))
          .where('subscription_id', '=', c.id)
          .execute();
    }
    const seen = await readSlices(db, [a.node, b.node], undefined);
    const candidates = new Set<string>();
    const members = cases.map((c) => ({
      id: c.id,
      traffic_limit_bytes: c.limit ? LIMIT : null,
      expires_at: c.expired ? new Date(now.getTime() - 1000) : null,
    }));
    for (const [node, multiplier] of [
      [a.node, 1],
      [b.node, 0],
    ] as const) {
      const slices = seen.get(node);
      const state = { multiplier, slices: slices?.slices ?? new Map(), halfUsed: slices?.halfUsed ?? new Set<string>() };
      for (const id of mayBeDueSlices(members, state, now)) candidates.add(`${node} ${id}`);
    }
    const granted = new Set((await grant([a.node, b.node])).map((g) => `${g.node_id} ${g.subscription_id}`));
    // The cases that must get a slice: on a, a limit, not expired, not reached, no slice or a half-used one.
    const due = cases.filter((c) => c.limit && !c.expired && !c.reached && c.slice !== 'fresh').map((c) => `${a.node} ${c.id}`);
    expect([...granted].sort()).toEqual(due.sort());
    for (const g of granted) expect(candidates.has(g), g).toBe(true);
    const left = [...candidates].filter((k) => !granted.has(k)).map((k) => cases.find((c) => k.endsWith(c.id)));
    expect(left.length).toBeGreaterThan(0);
    for (const c of left) expect(c?.reached, JSON.stringify(c)).toBe(true);
  });
});
