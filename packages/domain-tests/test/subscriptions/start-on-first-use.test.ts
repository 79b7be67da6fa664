import { randomUUID } from 'node:crypto';
import { applyImport, getSubscription, type ImportedUser, ingestUsageReport, sweepSubscriptionStatuses } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';

// Issue 34: a term that starts on first use (Marzban's "on hold"), at its verbs: the import
// keeps it, the usage ingest starts it with the first traffic it credits, the sweep starts it at
// the source's latest start; until then the subscription serves with no expiry.
let bed: DomainTestbed;
let node: string;
let groups: string[];
beforeAll(async () => {
  bed = await createDomainTestbed();
  bed.clock.set(new Date('2026-05-01T00:00:00Z'));
  ({ node, groups } = await servedNode(bed.ctx()));
});
afterAll(() => bed.close());

const DAY = 86_400;
let n = 0;
/** An on-hold user imported, then put in the groups the test node serves. */
async function onHold(startsBy: Date | null): Promise<string> {
  const username = `held${++n}`;
  const user: ImportedUser = {
    key: username,
    username,
    linkKey: null,
    email: null,
    status: 'on_hold',
    usedBytes: 0,
    lifetimeUsedBytes: 0,
    trafficLimitBytes: null,
    renewal: 'no_reset',
    expiresAt: null,
    onHold: { durationSeconds: 30 * DAY, startsBy },
    credentials: { vless: { uuid: randomUUID(), flow: '' } },
    inboundTags: [],
    note: null,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    linksRevokedAt: null,
  };
  const report = await applyImport(
    bed.ctx(),
    { source: 'marzban', sourceVersion: null, linkSecret: null, users: [user], inbounds: [], notCarried: [] },
    { sourceName: `held-${n}` },
  );
  expect(report.not_carried).toEqual([]);
  const id = report.users[0]?.subscription_id as string;
  await bed.deps.db
    .insertInto('subscription_access_groups')
    .values(groups.map((access_group_id) => ({ subscription_id: id, access_group_id })))
    .execute();
  return id;
}

const revision = async () =>
  Number(
    (await bed.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', node).executeTakeFirstOrThrow()).desired_revision,
  );

let reportId = 0n;
const traffic = (id: string, bytes: number) =>
  ingestUsageReport(bed.deps, node, {
    report_id: ++reportId,
    entries: [{ subscription_id: id, uplink_bytes: BigInt(bytes), downlink_bytes: 0n }],
  });

describe('a term that starts on first use', () => {
  it('is imported waiting: active, no expiry, the term and its latest start shown', async () => {
    const id = await onHold(new Date('2026-09-01T00:00:00Z'));
    expect(await getSubscription(bed.ctx(), id)).toMatchObject({
      status: 'active',
      expires_at: null,
      starts_on_first_use: { term_seconds: 30 * DAY, start_by: '2026-09-01T00:00:00.000Z' },
    });
  });

  it('starts with the first traffic credited: expires_at = then + the term; a report without traffic starts nothing', async () => {
    const id = await onHold(null);
    await traffic(id, 0);
    expect((await getSubscription(bed.ctx(), id)).starts_on_first_use).not.toBeNull();
    bed.clock.set(new Date('2026-05-10T12:00:00Z'));
    await traffic(id, 1_000);
    expect(await getSubscription(bed.ctx(), id)).toMatchObject({
      expires_at: '2026-06-09T12:00:00.000Z',
      starts_on_first_use: null,
      status: 'active',
    });
    // Later traffic moves nothing.
    bed.clock.set(new Date('2026-05-20T00:00:00Z'));
    await traffic(id, 1_000);
    expect((await getSubscription(bed.ctx(), id)).expires_at).toBe('2026-06-09T12:00:00.000Z');
  });

  it('a term started by traffic, or by the sweep, gives the nodes serving it a new revision (the expiry is in their desired state: they cut at it while the control plane is away); later traffic does not', async () => {
    bed.clock.set(new Date('2026-05-20T00:00:00Z'));
    const used = await onHold(null);
    const before = await revision();
    await traffic(used, 1_000);
    expect(await revision()).toBe(before + 1);
    await traffic(used, 1_000);
    expect(await revision()).toBe(before + 1);
    const idle = await onHold(new Date('2026-05-21T00:00:00Z'));
    const beforeSweep = await revision();
    bed.clock.set(new Date('2026-05-21T00:00:01Z'));
    await sweepSubscriptionStatuses(bed.ctx());
    expect((await getSubscription(bed.ctx(), idle)).expires_at).toBe('2026-06-20T00:00:00.000Z');
    expect(await revision()).toBeGreaterThan(beforeSweep);
  });

  it('unused by its latest start, the sweep starts it then: expires_at = start_by + the term', async () => {
    const id = await onHold(new Date('2026-06-01T00:00:00Z'));
    bed.clock.set(new Date('2026-05-31T23:59:59Z'));
    await sweepSubscriptionStatuses(bed.ctx());
    expect((await getSubscription(bed.ctx(), id)).starts_on_first_use).not.toBeNull();
    bed.clock.set(new Date('2026-06-02T00:00:00Z'));
    await sweepSubscriptionStatuses(bed.ctx());
    expect(await getSubscription(bed.ctx(), id)).toMatchObject({
      expires_at: '2026-07-01T00:00:00.000Z',
      starts_on_first_use: null,
      status: 'active',
    });
  });

  it('a latest start so long ago that the term is over: the same sweep expires it', async () => {
    bed.clock.set(new Date('2026-06-02T00:00:00Z'));
    const id = await onHold(new Date('2026-01-01T00:00:00Z'));
    await sweepSubscriptionStatuses(bed.ctx());
    expect(await getSubscription(bed.ctx(), id)).toMatchObject({ expires_at: '2026-01-31T00:00:00.000Z', status: 'expired' });
    const stored = await bed.deps.db.selectFrom('subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('expired');
  });
});
