import {
  announceOfflineNodes,
  DENIAL_HOLD_MS,
  decideDenials,
  deviceDenialsOfNode,
  extendSubscription,
  parseDeviceHeaders,
  parseInput,
  portalDevices,
  portalRemoveDevice,
  recordDeviceReport,
  registerDeviceFetch,
  removeSubscriptionDevice,
  subscriptionDevices,
  TOPICS,
  UpdateSubscriptionInput,
  unitOfWork,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { auditOf } from '../support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const headers = (h: Record<string, string>) => (name: string) => h[name];
const device = (hwid: string, extra: Record<string, string> = {}) =>
  parseDeviceHeaders(headers({ 'x-hwid': hwid, ...extra })) as NonNullable<ReturnType<typeof parseDeviceHeaders>>;

async function limited(limit: number | null, groups: string[] = []) {
  const sub = await fixtures(bed.ctx()).subscription({ access_group_ids: groups });
  await bed.deps.db.updateTable('subscriptions').set({ device_limit: limit }).where('id', '=', sub.id).execute();
  return sub;
}

async function onlineNode(groups?: string[]) {
  const served = await servedNode(bed.ctx());
  await bed.deps.db.updateTable('nodes').set({ connectivity: 'online' }).where('id', '=', served.node).execute();
  return { ...served, groups: groups ?? served.groups };
}

describe('HWID headers (parseDeviceHeaders)', () => {
  it('no x-hwid: no device (the fetch is answered as ever)', () => {
    expect(parseDeviceHeaders(headers({ 'user-agent': 'Happ/3.0' }))).toBeNull();
  });

  it('reads the device and what it says of itself; a long User-Agent is kept to 256 characters', () => {
    expect(
      parseDeviceHeaders(
        headers({
          'x-hwid': ' 5f3c9a1e-hwid ',
          'x-device-os': 'iOS',
          'x-ver-os': '18.3',
          'x-device-model': 'iPhone 14 Pro Max',
          'user-agent': `Happ/${'9'.repeat(400)}`,
        }),
      ),
    ).toEqual({ hwid: '5f3c9a1e-hwid', os: 'iOS', os_version: '18.3', model: 'iPhone 14 Pro Max', user_agent: `Happ/${'9'.repeat(251)}` });
  });

  it.each([
    ['an empty x-hwid', { 'x-hwid': '' }, 'x-hwid'],
    ['an x-hwid of 129 characters', { 'x-hwid': 'a'.repeat(129) }, 'x-hwid'],
    ['an x-hwid with a space', { 'x-hwid': 'a b' }, 'x-hwid'],
    ['an x-hwid beyond ASCII', { 'x-hwid': 'ä' }, 'x-hwid'],
    ['an OS of 65 characters', { 'x-hwid': 'ok', 'x-device-os': 'x'.repeat(65) }, 'x-device-os'],
    ['a model with a NUL', { 'x-hwid': 'ok', 'x-device-model': 'a\u0000b' }, 'x-device-model'],
    ['a version with a lone surrogate', { 'x-hwid': 'ok', 'x-ver-os': 'a\ud800' }, 'x-ver-os'],
  ])('refuses %s naming the header', (_what, h, field) => {
    let err: unknown;
    try {
      parseDeviceHeaders(headers(h));
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ type: 'validation', errors: { [field]: expect.any(String) } });
  });
});

describe('registerDeviceFetch', () => {
  it('registers a new device, refreshes a known one, and refuses a new one at the limit without writing anything', async () => {
    const sub = await limited(2);
    const a = await registerDeviceFetch(bed.deps, sub.id, device('phone-a', { 'x-device-os': 'Android' }));
    expect(a).toMatchObject({ outcome: 'registered' });
    expect(await registerDeviceFetch(bed.deps, sub.id, device('phone-b'))).toMatchObject({ outcome: 'registered' });
    bed.clock.advance(60_000);
    const again = await registerDeviceFetch(bed.deps, sub.id, device('phone-a', { 'x-ver-os': '14' }));
    expect(again).toEqual({ outcome: 'refreshed', device_id: a.outcome === 'registered' ? a.device_id : '' });
    const before = await bed.deps.db.selectFrom('subscription_devices').selectAll().where('subscription_id', '=', sub.id).execute();
    expect(await registerDeviceFetch(bed.deps, sub.id, device('phone-c'))).toEqual({
      outcome: 'over_limit',
      device_limit: 2,
      registered: 2,
    });
    const after = await bed.deps.db.selectFrom('subscription_devices').selectAll().where('subscription_id', '=', sub.id).execute();
    expect(after).toEqual(before);
    const phoneA = after.find((d) => d.hwid === 'phone-a');
    // What it said before stays when a later fetch does not say it again.
    expect(phoneA).toMatchObject({ os: 'Android', os_version: '14' });
    expect(new Date(phoneA?.last_seen_at as Date).getTime() - new Date(phoneA?.first_seen_at as Date).getTime()).toBe(60_000);
  });

  it('no device limit: every device is registered', async () => {
    const sub = await limited(null);
    for (let i = 0; i < 5; i++)
      expect(await registerDeviceFetch(bed.deps, sub.id, device(`d${i}`))).toMatchObject({ outcome: 'registered' });
  });

  it('new devices racing for the last place: exactly one gets it', async () => {
    const sub = await limited(1);
    const results = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((h) => registerDeviceFetch(bed.deps, sub.id, device(h))));
    expect(results.filter((r) => r.outcome === 'registered')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'over_limit')).toHaveLength(3);
  });

  it('a removed device frees its place (audited); another subscription’s device id is not found', async () => {
    const sub = await limited(1);
    const other = await limited(1);
    const r = await registerDeviceFetch(bed.deps, sub.id, device('only'));
    const id = r.outcome === 'registered' ? r.device_id : '';
    await expect(removeSubscriptionDevice(bed.ctx(), other.id, id)).rejects.toMatchObject({ type: 'not-found' });
    await removeSubscriptionDevice(bed.ctx(), sub.id, id);
    expect(await auditOf(bed.deps, sub.id)).toContainEqual(
      expect.objectContaining({ action: 'subscription.device_removed', details: { device_id: id, hwid: 'only' } }),
    );
    expect(await registerDeviceFetch(bed.deps, sub.id, device('next'))).toMatchObject({ outcome: 'registered' });
  });
});

describe('the denial rule (decideDenials)', () => {
  const t = (s: number) => new Date(1_800_000_000_000 + s * 1000);
  const seen = (address: string, first: number, opts: { denied?: number; live?: boolean; last?: number } = {}) => ({
    address,
    first_seen_at: t(first),
    seen_at: t(opts.last ?? 100),
    denied_at: opts.denied === undefined ? null : t(opts.denied),
    live: opts.live ?? true,
  });

  it('the first seen keep their places; the ones beyond the limit are refused', () => {
    const d = decideDenials(2, [seen('10.0.0.3', 3), seen('10.0.0.1', 1), seen('10.0.0.2', 2)], t(100));
    expect(d.denied).toEqual([{ address: '10.0.0.3', denied_at: t(100) }]);
  });

  it('a refused address stays behind a newcomer (a phone that changed networks gets the place, not the shared key)', () => {
    const d = decideDenials(1, [seen('10.0.0.9', 1, { denied: 50 }), seen('10.0.0.7', 90)], t(100));
    expect(d.denied).toEqual([{ address: '10.0.0.9', denied_at: t(50) }]);
  });

  it('a refused address no node lists any more is held for the hold, then forgotten; an allowed one is forgotten at once', () => {
    const held = seen('10.0.0.9', 1, { denied: 50, live: false, last: 100 });
    const gone = seen('10.0.0.8', 1, { live: false, last: 100 });
    expect(decideDenials(1, [held, gone], new Date(t(100).getTime() + DENIAL_HOLD_MS))).toEqual({
      denied: [{ address: '10.0.0.9', denied_at: t(50) }],
      forget: ['10.0.0.8'],
    });
    expect(decideDenials(1, [held], new Date(t(100).getTime() + DENIAL_HOLD_MS + 1))).toEqual({ denied: [], forget: ['10.0.0.9'] });
  });

  it('no limit: nothing is refused', () => {
    expect(decideDenials(null, [seen('10.0.0.1', 1, { denied: 1 }), seen('10.0.0.2', 2)], t(100)).denied).toEqual([]);
  });
});

describe('DeviceReport and the fleet-wide count', () => {
  it('a node announced offline (its agent away past the grace) takes its devices out of the count: a denial only they caused lifts, and the nodes hear of it; a node whose stream just ended still counts (a gateway restart lifts nothing)', async () => {
    const a = await onlineNode();
    const b = await onlineNode();
    const sub = await limited(2, [...a.groups, ...b.groups]);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['198.51.100.31', '198.51.100.32'] }]);
    bed.clock.advance(1000);
    await recordDeviceReport(bed.deps, b.node, [{ subscription_id: sub.id, addresses: ['198.51.100.33'] }]);
    const denial = { subscription_id: sub.id, addresses: ['198.51.100.33'] };
    expect(await deviceDenialsOfNode(bed.deps.db, b.node)).toContainEqual(denial);
    // a's stream ends: offline, announced online until the grace has passed.
    await bed.deps.db
      .updateTable('nodes')
      .set({ connectivity: 'offline', presence_announced: 'online', last_seen_at: bed.clock.now() })
      .where('id', '=', a.node)
      .execute();
    const ctx = bed.ctx();
    bed.clock.advance((ctx.config.notify.node_offline_grace_seconds - 1) * 1000);
    await announceOfflineNodes(ctx);
    expect(await deviceDenialsOfNode(bed.deps.db, b.node)).toContainEqual(denial);
    const before = bed.published(TOPICS.deviceDenialsChanged).length;
    bed.clock.advance(2000);
    expect(await announceOfflineNodes(ctx)).toBeGreaterThanOrEqual(1);
    expect((await deviceDenialsOfNode(bed.deps.db, b.node)).find((d) => d.subscription_id === sub.id)).toBeUndefined();
    expect(
      bed
        .published(TOPICS.deviceDenialsChanged)
        .slice(before)
        .flatMap((m) => (m as { ids: string[] }).ids),
    ).toContain(b.node);
  });

  it('two nodes whose union exceeds the limit: the address seen last is refused on both; the change reaches both', async () => {
    const a = await onlineNode();
    const b = await onlineNode();
    const sub = await limited(2, [...a.groups, ...b.groups]);
    const published = () => bed.published(TOPICS.deviceDenialsChanged).length;
    const r1 = await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['198.51.100.1', '198.51.100.2'] }]);
    expect(r1.nodes).toEqual([]);
    bed.clock.advance(1000);
    const before = published();
    const r2 = await recordDeviceReport(bed.deps, b.node, [{ subscription_id: sub.id, addresses: ['198.51.100.2', '2001:db8:1:2::/64'] }]);
    expect(r2.nodes).toEqual([a.node, b.node].sort());
    expect(bed.published(TOPICS.deviceDenialsChanged).slice(before)).toEqual([{ ids: [a.node, b.node].sort() }]);
    const expected = [{ subscription_id: sub.id, addresses: ['2001:db8:1:2::/64'] }];
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual(expected);
    expect(await deviceDenialsOfNode(bed.deps.db, b.node)).toEqual(expected);
    const view = await subscriptionDevices(bed.deps, sub.id);
    expect(view.denied).toEqual(['2001:db8:1:2::/64']);
    expect(view.online.map((o) => [o.address, o.node_id === a.node ? 'a' : 'b'])).toEqual([
      ['198.51.100.1', 'a'],
      ['198.51.100.2', 'a'],
      ['198.51.100.2', 'b'],
      ['2001:db8:1:2::/64', 'b'],
    ]);
    // The same picture again changes nothing and tells no node.
    const still = published();
    expect(
      (await recordDeviceReport(bed.deps, b.node, [{ subscription_id: sub.id, addresses: ['198.51.100.2', '2001:db8:1:2::/64'] }])).nodes,
    ).toEqual([]);
    expect(published()).toBe(still);
  });

  it('the refused address ended: held for the hold (not let straight back in), then forgotten', async () => {
    const a = await onlineNode();
    const sub = await limited(1, a.groups);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['203.0.113.1'] }]);
    bed.clock.advance(1000);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['203.0.113.1', '203.0.113.2'] }]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([{ subscription_id: sub.id, addresses: ['203.0.113.2'] }]);
    bed.clock.advance(1000);
    // The agent ended its connections: the report no longer lists it; it stays refused.
    expect((await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['203.0.113.1'] }])).nodes).toEqual([]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([{ subscription_id: sub.id, addresses: ['203.0.113.2'] }]);
    // The hold counts from the report that stopped listing it.
    bed.clock.advance(DENIAL_HOLD_MS);
    expect((await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['203.0.113.1'] }])).nodes).toEqual([]);
    bed.clock.advance(1);
    expect((await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['203.0.113.1'] }])).nodes).toEqual([a.node]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([]);
  });

  it('a limit removed without a recount (written elsewhere) lets every address in at the node’s next report', async () => {
    const a = await onlineNode();
    const sub = await limited(1, a.groups);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['192.0.2.1', '192.0.2.2'] }]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toHaveLength(1);
    await bed.deps.db.updateTable('subscriptions').set({ device_limit: null }).where('id', '=', sub.id).execute();
    expect(
      (await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['192.0.2.1', '192.0.2.2'] }])).nodes,
    ).toEqual([a.node]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([]);
  });

  it('a limit lowered by PATCH refuses at once, without waiting for the next report; raised, it lifts', async () => {
    const a = await onlineNode();
    const sub = await limited(3, a.groups);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['192.0.2.31', '192.0.2.32', '192.0.2.33'] }]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([]);
    const before = bed.published(TOPICS.deviceDenialsChanged).length;
    await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { device_limit: 1 }));
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([{ subscription_id: sub.id, addresses: ['192.0.2.32', '192.0.2.33'] }]);
    expect(bed.published(TOPICS.deviceDenialsChanged).slice(before)).toEqual([{ ids: [a.node] }]);
    await updateSubscription(bed.ctx(), sub.id, parseInput(UpdateSubscriptionInput, { device_limit: null }));
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([]);
  });

  it('a device limit a bought plan brings refuses at once, without waiting for the next report', async () => {
    const a = await onlineNode();
    const sub = await limited(null, a.groups);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['192.0.2.41', '192.0.2.42', '192.0.2.43'] }]);
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([]);
    const plan = await fixtures(bed.ctx()).plan({ duration_days: 30 });
    const before = bed.published(TOPICS.deviceDenialsChanged).length;
    await unitOfWork(bed.ctx(), (uow) =>
      extendSubscription(
        uow,
        sub.id,
        {
          by_ms: 30 * 86_400_000,
          terms: {
            plan_id: plan.id,
            duration_ms: 30 * 86_400_000,
            traffic_limit_bytes: null,
            device_limit: 2,
            upload_bps: null,
            download_bps: null,
            renewal: 'no_reset',
            access_group_ids: a.groups,
          },
        },
        bed.deps.clock.now(),
      ),
    );
    expect(await deviceDenialsOfNode(bed.deps.db, a.node)).toEqual([{ subscription_id: sub.id, addresses: ['192.0.2.43'] }]);
    expect(bed.published(TOPICS.deviceDenialsChanged).slice(before)).toEqual([{ ids: [a.node] }]);
  });

  it('an offline node’s addresses do not count', async () => {
    const a = await onlineNode();
    const b = await onlineNode();
    const sub = await limited(1, [...a.groups, ...b.groups]);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['192.0.2.10'] }]);
    await bed.deps.db.updateTable('nodes').set({ connectivity: 'offline' }).where('id', '=', a.node).execute();
    bed.clock.advance(1000);
    await recordDeviceReport(bed.deps, b.node, [{ subscription_id: sub.id, addresses: ['192.0.2.11'] }]);
    expect(await deviceDenialsOfNode(bed.deps.db, b.node)).toEqual([]);
    expect((await subscriptionDevices(bed.deps, sub.id)).online.map((o) => o.address)).toEqual(['192.0.2.11']);
  });

  it('bounded: garbage, unknown subscriptions and addresses past 64 a user are dropped; the rest is kept', async () => {
    const a = await onlineNode();
    const sub = await limited(null, a.groups);
    const many = Array.from({ length: 70 }, (_, i) => `10.1.0.${i}`);
    const r = await recordDeviceReport(bed.deps, a.node, [
      { subscription_id: sub.id, addresses: [...many, 'has space', 'x'.repeat(65)] },
      { subscription_id: 'sub_nope', addresses: ['10.9.9.9'] },
      { subscription_id: 'bad\u0000id', addresses: ['10.9.9.9'] },
    ]);
    expect(r).toMatchObject({ users: 1, addresses: 64 });
    expect(r.dropped).toBe(6 + 2 + 1 + 1);
  });

  it('a user no longer listed leaves the node’s rows (the report is the whole picture)', async () => {
    const a = await onlineNode();
    const sub = await limited(null, a.groups);
    await recordDeviceReport(bed.deps, a.node, [{ subscription_id: sub.id, addresses: ['10.2.0.1'] }]);
    await recordDeviceReport(bed.deps, a.node, []);
    expect((await subscriptionDevices(bed.deps, sub.id)).online).toEqual([]);
  });
});

describe('portal devices', () => {
  it('a client sees and removes only their own devices; another client’s device is not found', async () => {
    const f = fixtures(bed.ctx());
    const alice = await f.client();
    const bob = await f.client();
    const mine = await f.subscription({ client_id: alice.id });
    const theirs = await f.subscription({ client_id: bob.id });
    const m = await registerDeviceFetch(bed.deps, mine.id, device('alice-phone'));
    const t = await registerDeviceFetch(bed.deps, theirs.id, device('bob-phone'));
    const asAlice = { ...bed.deps, actor: { type: 'client' as const, id: alice.id } };
    const listed = await portalDevices(asAlice);
    expect(listed.map((s) => [s.subscription_id, s.registered.map((d) => d.hwid)])).toEqual([[mine.id, ['alice-phone']]]);
    const theirId = t.outcome === 'registered' ? t.device_id : '';
    await expect(portalRemoveDevice(asAlice, theirId)).rejects.toMatchObject({ type: 'not-found' });
    expect((await subscriptionDevices(bed.deps, theirs.id)).registered).toHaveLength(1);
    await portalRemoveDevice(asAlice, m.outcome === 'registered' ? m.device_id : '');
    expect((await subscriptionDevices(bed.deps, mine.id)).registered).toEqual([]);
  });
});
