import {
  getSubscription,
  ingestUsageReport,
  listSubscriptions,
  parseInput,
  UpdateSubscriptionInput,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let bed: DomainTestbed;
let client: string;
let node: string;
let group: string;
let reportId = 1n;
beforeAll(async () => {
  bed = await createDomainTestbed();
  client = (await fixtures(bed.ctx()).client()).id;
  // Usage counts only from a node that serves the subscription (issue 12.4).
  const serving = await fixtures(bed.ctx()).servingNode();
  node = serving.node.id;
  group = serving.group.id;
});
afterAll(() => bed.close());

const inFuture = (ms: number) => new Date(bed.clock.now().getTime() + ms).toISOString();
const stored = async (id: string) =>
  (await bed.deps.db.selectFrom('subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const update = (id: string, input: Record<string, unknown>) =>
  updateSubscription(bed.ctx(), id, parseInput(UpdateSubscriptionInput, input));
const sub = (input: Parameters<ReturnType<typeof fixtures>['subscription']>[0] = {}) =>
  fixtures(bed.ctx()).subscription({ client_id: client, access_group_ids: [group], ...input });
/** Traffic as the node's usage report credits it. */
const use = (id: string, bytes: number) =>
  ingestUsageReport(bed.deps, node, {
    report_id: reportId++,
    entries: [{ subscription_id: id, uplink_bytes: BigInt(bytes), downlink_bytes: 0n }],
  });

describe('status: disabled > expired > limited > active, stored on every write and computed on every read', () => {
  it('reaching the limit shows limited; raising the limit makes it active again, lowering it limits it, null lifts it', async () => {
    const s = await sub({ traffic_limit_bytes: 1000 });
    await use(s.id, 1000);
    expect(await getSubscription(bed.ctx(), s.id)).toMatchObject({ status: 'limited', used_bytes: 1000 });
    expect((await update(s.id, { traffic_limit_bytes: 5000 })).status).toBe('active');
    expect(await stored(s.id)).toBe('active');
    expect((await update(s.id, { traffic_limit_bytes: 999 })).status).toBe('limited');
    expect(await stored(s.id)).toBe('limited');
    expect((await update(s.id, { traffic_limit_bytes: null })).status).toBe('active');
  });

  it('the admin disables and enables; disabled outranks expired and limited, active gives back the computed status', async () => {
    const s = await sub({ traffic_limit_bytes: 0 });
    expect(s.status).toBe('limited');
    expect((await update(s.id, { status: 'disabled' })).status).toBe('disabled');
    bed.clock.advance(1000);
    expect((await update(s.id, { expires_at: new Date(bed.clock.now().getTime() - 1).toISOString() })).status).toBe('disabled');
    expect((await update(s.id, { expires_at: null })).status).toBe('disabled');
    expect((await update(s.id, { status: 'active' })).status).toBe('limited');
  });

  it('limited and expired are computed: the input refuses them', () => {
    for (const status of ['limited', 'expired', 'paused'])
      expect(() => parseInput(UpdateSubscriptionInput, { status })).toThrow(
        expect.objectContaining({ errors: { status: expect.any(String) } }),
      );
  });

  it('expiry by time alone: reads and the status filter show expired at once, the stored row lags until the next write', async () => {
    const s = await sub({ expires_at: inFuture(HOUR) });
    bed.clock.advance(HOUR);
    expect((await getSubscription(bed.ctx(), s.id)).status).toBe('expired');
    expect(await stored(s.id)).toBe('active');
    const listed = async (status: 'active' | 'expired') =>
      (await listSubscriptions(bed.ctx(), { client_id: client, status, limit: 200 })).items.map((x) => x.id);
    expect(await listed('expired')).toContain(s.id);
    expect(await listed('active')).not.toContain(s.id);
    // The next write stores it.
    expect((await update(s.id, { note: 'seen' })).status).toBe('expired');
    expect(await stored(s.id)).toBe('expired');
    // Moving expires_at into the future revives it.
    expect((await update(s.id, { expires_at: inFuture(DAY) })).status).toBe('active');
  });

  it('a past expires_at set by an update expires the subscription now', async () => {
    const s = await sub();
    expect((await update(s.id, { expires_at: new Date(bed.clock.now().getTime() - 1000).toISOString() })).status).toBe('expired');
  });
});
