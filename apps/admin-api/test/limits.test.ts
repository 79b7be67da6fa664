import { enforceTrafficLimits, ingestUsageReport, periodStart, resetEndedPeriods, SYSTEM, withActor } from '@svc/domain';
import { createFakeClock, login, OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { createWorker } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 6, limits: each transition with a fake clock, written as the system, audited, and
// pushed to the nodes (a new revision).

let s: TestServer;
let token: string;
beforeAll(async () => {
  // Mid-month, a Wednesday: 2026-11-18 10:00 UTC.
  s = await startAdminApi({ clock: createFakeClock(new Date('2026-11-18T10:00:00Z')) });
  token = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

const system = () => withActor(s.deps, SYSTEM);

async function fleet(sub: Record<string, unknown>) {
  const tag = Math.random().toString(36).slice(2, 8);
  const post = async (path: string, body: unknown) => {
    const res = await s.api.post(path, body, { token });
    expect(res.status, `${path} ${res.text}`).toBe(201);
    return res.body;
  };
  const node = await post('/api/v1/nodes', { name: `lim-${tag}`, address: `${tag}.example.com` });
  const profile = await post('/api/v1/inbound-profiles', {
    name: `lim-${tag}`,
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: `lim-${tag}`, inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: `lim-${tag}@example.com` });
  const created = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id], ...sub });
  return { node, sub: created as { id: string } };
}

const subRow = (id: string) => s.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const revision = async (id: string) =>
  Number((await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision);
const audits = (id: string) =>
  s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).where('actor_type', '=', 'system').orderBy('at').execute();
let reportId = 1n;
const use = (nodeId: string, subId: string, bytes: number) =>
  ingestUsageReport(s.deps, nodeId, {
    report_id: reportId++,
    entries: [{ subscription_id: subId, uplink_bytes: BigInt(bytes), downlink_bytes: 0n }],
  });

async function freshToken() {
  token = (await login(s, OWNER.email, OWNER.password)).access_token;
}

describe('periodStart: renewal boundaries in UTC', () => {
  it('day at midnight, week at Monday midnight (ISO), month on the 1st', () => {
    const at = new Date('2026-11-18T10:00:00Z'); // Wednesday
    expect(periodStart('day', at)?.toISOString()).toBe('2026-11-18T00:00:00.000Z');
    expect(periodStart('week', at)?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('week', new Date('2026-11-16T00:00:00Z'))?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('week', new Date('2026-11-22T23:59:59Z'))?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(periodStart('month', at)?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(periodStart('month', new Date('2027-01-01T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodStart('no_reset', at)).toBeNull();
  });
});

describe('limits written down by the system and pushed to the nodes', () => {
  it('usage reaching traffic_limit_bytes makes the subscription limited: audited as the system, its node gets a new revision', async () => {
    const { node, sub } = await fleet({ traffic_limit_bytes: 1000 });
    await use(node.id, sub.id, 999);
    expect(await enforceTrafficLimits(system())).toBe(0);
    expect((await subRow(sub.id)).status).toBe('active');

    const before = await revision(node.id);
    await use(node.id, sub.id, 1);
    expect(await enforceTrafficLimits(system())).toBe(1);
    expect((await subRow(sub.id)).status).toBe('limited');
    expect(await revision(node.id)).toBeGreaterThan(before);
    expect((await audits(sub.id)).map((a) => [a.action, a.actor_id])).toEqual([['subscription.limited', null]]);
    // Done once: nothing left to write.
    expect(await enforceTrafficLimits(system())).toBe(0);
  });

  it('a PATCH of the limit re-evaluates at once: raising it makes the subscription active again, lowering it below usage limits it', async () => {
    const { node, sub } = await fleet({ traffic_limit_bytes: 100 });
    await use(node.id, sub.id, 150);
    await enforceTrafficLimits(system());
    expect((await subRow(sub.id)).status).toBe('limited');
    const raised = await s.api.patch(`/api/v1/subscriptions/${sub.id}`, { traffic_limit_bytes: 10_000 }, { token });
    expect(raised.status, raised.text).toBe(200);
    expect(raised.body.status).toBe('active');
    expect((await subRow(sub.id)).status).toBe('active');
    const lowered = await s.api.patch(`/api/v1/subscriptions/${sub.id}`, { traffic_limit_bytes: 100 }, { token });
    expect(lowered.body.status).toBe('limited');
  });

  it('renewal month: at the 1st (UTC) used traffic resets and a limited subscription is active again; pushed and audited', async () => {
    const { node, sub } = await fleet({ traffic_limit_bytes: 500, renewal: 'month' });
    const daily = await fleet({ traffic_limit_bytes: 500, renewal: 'day' });
    const never = await fleet({ traffic_limit_bytes: 500 });
    for (const f of [{ node, sub }, daily, never]) await use(f.node.id, f.sub.id, 600);
    await enforceTrafficLimits(system());
    expect((await subRow(sub.id)).status).toBe('limited');

    // Still November: nothing to reset for the monthly one; the daily one resets at midnight.
    s.clock.set(new Date('2026-11-19T00:00:01Z'));
    await freshToken();
    expect(await resetEndedPeriods(system())).toBe(1);
    expect((await subRow(daily.sub.id)).status).toBe('active');
    expect((await subRow(sub.id)).status).toBe('limited');

    const before = await revision(node.id);
    s.clock.set(new Date('2026-12-01T00:00:05Z'));
    await freshToken();
    const reset = await resetEndedPeriods(system());
    expect(reset).toBe(2); // the monthly one and, a day later again, the daily one
    const row = await subRow(sub.id);
    expect([row.status, Number(row.used_bytes), row.period_started_at.toISOString()]).toEqual(['active', 0, '2026-12-01T00:00:00.000Z']);
    expect(Number(row.lifetime_used_bytes)).toBe(600);
    expect(await revision(node.id)).toBeGreaterThan(before);
    const actions = (await audits(sub.id)).map((a) => a.action);
    expect(actions).toEqual(['subscription.limited', 'subscription.period_reset']);
    const resetAudit = (await audits(sub.id)).at(-1);
    expect(resetAudit?.details).toMatchObject({ renewal: 'month', used_bytes: 600, status: { from: 'limited', to: 'active' } });
    // no_reset keeps its usage and its status.
    expect((await subRow(never.sub.id)).status).toBe('limited');
    expect(await resetEndedPeriods(system())).toBe(0);
  });

  it("the worker's scheduled sweep runs as the system: a limit reached is written down without anyone asking", async () => {
    const { node, sub } = await fleet({ traffic_limit_bytes: 10 });
    await use(node.id, sub.id, 20);
    const { start, stop } = createWorker(s.runtime, { sweepEveryMs: 20 });
    await start();
    try {
      for (let i = 0; i < 100 && (await subRow(sub.id)).status !== 'limited'; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await stop();
    }
    expect((await subRow(sub.id)).status).toBe('limited');
  });
});
