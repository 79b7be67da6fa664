import {
  extendSubscription,
  getSubscription,
  type PlanTerms,
  parseInput,
  shortenSubscription,
  subscriptionFromPlan,
  UpdateSubscriptionInput,
  unitOfWork,
  updateSubscription,
} from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { accessGroup, servedNode } from '../customers-support.ts';
import { auditOf, bumpsOf, fileTestbed } from '../support.ts';

// The subscription verbs a payment's effect is made of, and an admin's "+30 days" will reuse
// (subscription-term.ts; docs/payments.md "What a payment buys", "Refunds"): each rule here
// fails when the rule is broken.
const t = fileTestbed();
const DAY = 86_400_000;
const GIB = 1024 ** 3;
const now = () => t.bed.clock.now();
const inDays = (days: number) => new Date(now().getTime() + days * DAY);

const extend = (id: string, change: { by_ms: number; terms?: PlanTerms }) =>
  unitOfWork(t.bed.ctx(), (uow) => extendSubscription(uow, id, change, now()));
const shorten = (id: string, by_ms: number | 'all') =>
  unitOfWork(t.bed.ctx(), (uow) => shortenSubscription(uow, id, { by_ms, action: 'subscription.refund-reverted' }, now()));
const read = (id: string) => getSubscription(t.bed.ctx(), id);
/** The plan a subscription was last bought with (a column the admin view does not show). */
const planOf = async (id: string) =>
  (await t.bed.deps.db.selectFrom('subscriptions').select('plan_id').where('id', '=', id).executeTakeFirstOrThrow()).plan_id;

async function terms(over: Partial<PlanTerms> = {}): Promise<PlanTerms> {
  const plan = await t.f.plan({ duration_days: 30, traffic_limit_bytes: 50 * GIB });
  return {
    plan_id: plan.id,
    duration_ms: 30 * DAY,
    traffic_limit_bytes: 50 * GIB,
    device_limit: null,
    upload_bps: null,
    download_bps: null,
    renewal: 'month',
    access_group_ids: [],
    ...over,
  };
}

describe('extendSubscription: more time', () => {
  it('from the later of now and the expiry: time left is kept', async () => {
    const sub = await t.f.subscription({ expires_at: inDays(10) });
    const done = await extend(sub.id, { by_ms: 30 * DAY });
    expect(done?.expires_after).toBe(inDays(40).toISOString());
    expect((await read(sub.id)).expires_at).toBe(inDays(40).toISOString());
  });

  it('an expired subscription runs from now and is active again; its nodes get a new revision', async () => {
    const ctx = t.bed.ctx();
    const served = await servedNode(ctx);
    const sub = await t.f.subscription({ expires_at: inDays(1), access_group_ids: served.groups });
    t.bed.clock.advance(2 * DAY);
    await unitOfWork(ctx, async (uow) => {
      await uow.db.updateTable('subscriptions').set({ status: 'expired' }).where('id', '=', sub.id).execute();
    });
    const bumps = await bumpsOf(ctx, [served.node], () => extend(sub.id, { by_ms: 30 * DAY }));
    expect(bumps).toEqual({ [served.node]: 1 });
    expect(await read(sub.id)).toMatchObject({ status: 'active', expires_at: inDays(30).toISOString() });
    const [entry] = (await auditOf(ctx, sub.id)).filter((a) => a.action === 'subscription.extended');
    expect(entry?.details).toMatchObject({ by_days: 30, status: { from: 'expired', to: 'active' } });
  });

  it('one that never expires stays so', async () => {
    const sub = await t.f.subscription({ expires_at: null });
    expect((await extend(sub.id, { by_ms: 30 * DAY }))?.expires_after).toBeNull();
    expect((await read(sub.id)).expires_at).toBeNull();
  });

  it("without a plan's terms only the time changes: traffic used, limit and renewal stay", async () => {
    const sub = await t.f.subscription({ expires_at: inDays(5), traffic_limit_bytes: 10 * GIB, renewal: 'week' });
    await unitOfWork(t.bed.ctx(), async (uow) => {
      await uow.db
        .updateTable('subscription_counters')
        .set({ used_bytes: 3 * GIB })
        .where('subscription_id', '=', sub.id)
        .execute();
    });
    await extend(sub.id, { by_ms: 7 * DAY });
    expect(await read(sub.id)).toMatchObject({ used_bytes: 3 * GIB, traffic_limit_bytes: 10 * GIB, renewal: 'week' });
    expect(await planOf(sub.id)).toBeNull();
  });

  it("with a plan's terms: the plan's limit, renewal and groups, a new traffic period (used 0), the plan named", async () => {
    const ctx = t.bed.ctx();
    const [before, after] = [await servedNode(ctx), await servedNode(ctx)];
    const sub = await t.f.subscription({ expires_at: inDays(3), traffic_limit_bytes: GIB, access_group_ids: before.groups });
    await unitOfWork(ctx, async (uow) => {
      await uow.db.updateTable('subscription_counters').set({ used_bytes: GIB }).where('subscription_id', '=', sub.id).execute();
      await uow.db.updateTable('subscriptions').set({ status: 'limited' }).where('id', '=', sub.id).execute();
    });
    const plan = await terms({ access_group_ids: after.groups });
    // The nodes it leaves and the nodes it joins both change.
    const bumps = await bumpsOf(ctx, [before.node, after.node], () => extend(sub.id, { by_ms: plan.duration_ms, terms: plan }));
    expect(bumps).toEqual({ [before.node]: 1, [after.node]: 1 });
    expect(await read(sub.id)).toMatchObject({
      status: 'active',
      used_bytes: 0,
      traffic_limit_bytes: 50 * GIB,
      renewal: 'month',
      access_group_ids: after.groups,
      expires_at: inDays(33).toISOString(),
      period_started_at: now().toISOString(),
    });
    expect(await planOf(sub.id)).toBe(plan.plan_id);
  });

  it("a plan that names no groups keeps the subscription's own", async () => {
    const group = await accessGroup(t.bed.ctx());
    const sub = await t.f.subscription({ expires_at: inDays(3), access_group_ids: [group] });
    await extend(sub.id, { by_ms: 30 * DAY, terms: await terms() });
    expect((await read(sub.id)).access_group_ids).toEqual([group]);
  });

  it("an admin's disabled stays disabled, however much time is bought", async () => {
    const sub = await t.f.subscription({ expires_at: inDays(3) });
    await updateSubscription(t.bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { status: 'disabled' }));
    await extend(sub.id, { by_ms: 30 * DAY, terms: await terms() });
    expect((await read(sub.id)).status).toBe('disabled');
  });

  it('a subscription deleted since: nothing, and no error', async () => {
    expect(await extend('sub_gone', { by_ms: DAY })).toBeNull();
  });
});

describe('subscriptionFromPlan: a new subscription on the terms', () => {
  it("runs the plan's duration from now with its limit, renewal and groups, and names the plan", async () => {
    const group = await accessGroup(t.bed.ctx());
    const client = await t.f.client();
    const plan = await terms({ access_group_ids: [group], renewal: 'day' });
    const made = await unitOfWork(t.bed.ctx(), (uow) => subscriptionFromPlan(t.bed.ctx(), uow, client.id, plan, now()));
    expect(made).toMatchObject({ expires_before: null, expires_after: inDays(30).toISOString() });
    expect(await read(made.subscription_id)).toMatchObject({
      client_id: client.id,
      status: 'active',
      traffic_limit_bytes: 50 * GIB,
      renewal: 'day',
      access_group_ids: [group],
      expires_at: inDays(30).toISOString(),
    });
    expect(await planOf(made.subscription_id)).toBe(plan.plan_id);
  });
});

describe('shortenSubscription: less time', () => {
  it('back by the given time, never before now; reaching now, it is expired and its nodes change', async () => {
    const ctx = t.bed.ctx();
    const served = await servedNode(ctx);
    const sub = await t.f.subscription({ expires_at: inDays(40), access_group_ids: served.groups });
    expect((await shorten(sub.id, 30 * DAY))?.expires_after).toBe(inDays(10).toISOString());
    expect((await read(sub.id)).status).toBe('active');
    const bumps = await bumpsOf(ctx, [served.node], () => shorten(sub.id, 30 * DAY));
    expect(bumps).toEqual({ [served.node]: 1 });
    expect(await read(sub.id)).toMatchObject({ status: 'expired', expires_at: now().toISOString() });
  });

  it("'all' ends it now, even one that never expired; a number leaves a never-expiring one as it is", async () => {
    const forever = await t.f.subscription({ expires_at: null });
    expect((await shorten(forever.id, 30 * DAY))?.expires_after).toBeNull();
    expect((await shorten(forever.id, 'all'))?.expires_after).toBe(now().toISOString());
    expect((await read(forever.id)).status).toBe('expired');
  });

  it('traffic, renewal and groups stay; audited as the caller says, with the expiry before and after', async () => {
    const group = await accessGroup(t.bed.ctx());
    const sub = await t.f.subscription({ expires_at: inDays(40), traffic_limit_bytes: GIB, renewal: 'week', access_group_ids: [group] });
    await shorten(sub.id, DAY);
    expect(await read(sub.id)).toMatchObject({ traffic_limit_bytes: GIB, renewal: 'week', access_group_ids: [group] });
    const [entry] = (await auditOf(t.bed.ctx(), sub.id)).filter((a) => a.action === 'subscription.refund-reverted');
    expect(entry?.details).toMatchObject({ expires_at: { from: inDays(40).toISOString(), to: inDays(39).toISOString() } });
  });
});
