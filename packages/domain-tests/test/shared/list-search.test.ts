import {
  CheckoutInput,
  countTotal,
  listAuditLog,
  listClients,
  listNodes,
  listPayments,
  listSubscriptions,
  type PortalCtx,
  parseInput,
  SYSTEM,
  startCheckout,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Issue 30 item 6: the list screens search and sort on the server, page in that sort, and
// say how many rows match (counted, or estimated past COUNT_EXACT_UP_TO, and labelled so).

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const tag = () => `t${Math.random().toString(36).slice(2, 10)}`;
const emails = (page: { items: Array<{ email: string }> }) => page.items.map((i) => i.email).sort();

/** Every row of a list, page after page of `limit`, in the order the pages give them. */
async function walk<T extends { id: string }>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await read(cursor);
    all.push(...page.items);
    if (!page.next_cursor) return all;
    cursor = page.next_cursor;
  }
  throw new Error('more than 100 pages');
}

describe('q searches a list on the server', () => {
  it('finds a client by any part of the email from 3 characters, by the start of the email or id under 3, and by the note', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const ana = await make.client({ email: `ana.${t}@mail.example`, note: `VIP ${t} reseller` });
    const bob = await make.client({ email: `bob.${t}@other.example` });
    const ctx = bed.ctx();
    expect(emails(await listClients(ctx, { limit: 50, q: t }))).toEqual([ana.email, bob.email]);
    expect(emails(await listClients(ctx, { limit: 50, q: `${t}@OTHER` }))).toEqual([bob.email]);
    expect(emails(await listClients(ctx, { limit: 50, q: `${t} reseller` }))).toEqual([ana.email]);
    // Under 3 characters: only the start of an email (or id) matches, never the middle.
    const short = await listClients(ctx, { limit: 200, q: 'an' });
    expect(short.items.every((c) => c.email.startsWith('an') || c.id.startsWith('an'))).toBe(true);
    expect(short.items.map((c) => c.id)).toContain(ana.id);
    expect((await listClients(ctx, { limit: 50, q: ana.id.slice(0, 20) })).items.map((c) => c.id)).toContain(ana.id);
    expect((await listClients(ctx, { limit: 50, q: ana.id })).items.map((c) => c.id)).toEqual([ana.id]);
  });

  it('a LIKE wildcard in q stands for itself', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const under = await make.client({ email: `x_${t}@mail.example` });
    await make.client({ email: `xy${t}@mail.example` });
    const ctx = bed.ctx();
    expect(emails(await listClients(ctx, { limit: 50, q: `x_${t}` }))).toEqual([under.email]);
    expect((await listClients(ctx, { limit: 50, q: `%${t}` })).items).toEqual([]);
    expect((await listClients(ctx, { limit: 50, q: '\\' })).items).toEqual([]);
  });

  it("finds a subscription by its client's email, its note or its id, and keeps the other filters", async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const client = await make.client({ email: `carol.${t}@mail.example` });
    const a = await make.subscription({ client_id: client.id, note: 'phone' });
    const b = await make.subscription({ client_id: client.id, note: `laptop ${t}`, status: 'disabled' });
    const ctx = bed.ctx();
    const ids = async (f: Parameters<typeof listSubscriptions>[1]) => (await listSubscriptions(ctx, f)).items.map((s) => s.id);
    expect(await ids({ limit: 50, q: `carol.${t}` })).toEqual([a.id, b.id]);
    expect(await ids({ limit: 50, q: `laptop ${t}` })).toEqual([b.id]);
    expect(await ids({ limit: 50, q: `carol.${t}`, status: 'disabled' })).toEqual([b.id]);
    expect(await ids({ limit: 50, q: a.id })).toEqual([a.id]);
    expect(await ids({ limit: 50, q: `nobody.${t}` })).toEqual([]);
  });

  it('a row that matches twice (its note and its client’s email) is listed and counted once, in every sort', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const client = await make.client({ email: `twice.${t}@mail.example` });
    const both = await make.subscription({ client_id: client.id, note: `for twice.${t}` });
    const other = await make.subscription({ client_id: client.id, note: 'other' });
    for (const sort of ['created', '-created', 'expires', '-used']) {
      const page = await listSubscriptions(bed.ctx(), { limit: 50, q: `twice.${t}`, sort });
      expect(page.items.map((s) => s.id).sort(), sort).toEqual([both.id, other.id].sort());
      expect(page.total, sort).toBe(2);
    }
    // Paged one by one, the walk still sees each once.
    const walked = await walk((cursor) => listSubscriptions(bed.ctx(), { limit: 1, q: `twice.${t}`, cursor }));
    expect(walked.map((s) => s.id)).toEqual([both.id, other.id]);
  });

  it('finds a node by name, address or id; a payment by id, provider id or email; an audit entry by action prefix or entity', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const node = await make.node({ name: `edge-${t}`, address: `${t}.nodes.example` });
    const ctx = bed.ctx();
    expect((await listNodes(ctx, { limit: 50, q: `EDGE-${t}` })).items.map((n) => n.id)).toEqual([node.id]);
    expect((await listNodes(ctx, { limit: 50, q: `${t}.nodes` })).items.map((n) => n.id)).toEqual([node.id]);
    expect((await listNodes(ctx, { limit: 50, q: node.id })).items.map((n) => n.id)).toEqual([node.id]);

    const client = await make.client({ email: `dave.${t}@mail.example` });
    await bed.deps.db.updateTable('clients').set({ email_verified_at: bed.clock.now() }).where('id', '=', client.id).execute();
    const plan = await make.plan({ price: 500, currency: 'EUR' });
    const provider = await make.paymentProvider({ enabled: true });
    const portal = withActor(bed.deps, { type: 'client', id: client.id }) as PortalCtx;
    const { checkout } = await startCheckout(portal, `k-${t}`, parseInput(CheckoutInput, { plan_id: plan.id, provider_id: provider.id }));
    const paymentIds = async (q: string) => (await listPayments(ctx, { limit: 50, q })).items.map((p) => p.id);
    expect(await paymentIds(`dave.${t}`)).toEqual([checkout.payment_id]);
    expect(await paymentIds(checkout.payment_id)).toEqual([checkout.payment_id]);
    expect(await paymentIds(`erin.${t}`)).toEqual([]);

    const audit = await listAuditLog(bed.ctx(), { limit: 200, q: node.id });
    expect(audit.items.map((e) => e.action)).toContain('node.created');
    const byAction = await listAuditLog(bed.ctx(), { limit: 200, q: 'node.' });
    expect(byAction.items.length).toBeGreaterThan(0);
    expect(byAction.items.every((e) => e.action.startsWith('node.'))).toBe(true);
  });
});

describe('sort keeps keyset pages', () => {
  it('subscriptions by expiry walk every row once in order, never-expiring last, both ways', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const client = await make.client({ email: `sort.${t}@mail.example` });
    const day = (n: number) => new Date(bed.clock.now().getTime() + n * 86_400_000).toISOString();
    const made = [];
    for (const expires of [day(30), null, day(5), day(30), day(90), null, day(1)])
      made.push(await make.subscription({ client_id: client.id, expires_at: expires }));
    const ctx = bed.ctx();
    const ascending = await walk((cursor) => listSubscriptions(ctx, { client_id: client.id, limit: 2, sort: 'expires', cursor }));
    const key = (s: { expires_at: string | null }) => s.expires_at ?? '9999';
    expect(ascending.map((s) => s.id).sort()).toEqual(made.map((s) => s.id).sort());
    for (let i = 1; i < ascending.length; i++) {
      const [prev, cur] = [ascending[i - 1] as (typeof ascending)[0], ascending[i] as (typeof ascending)[0]];
      expect(key(prev) < key(cur) || (key(prev) === key(cur) && prev.id < cur.id)).toBe(true);
    }
    expect(ascending.slice(-2).map((s) => s.expires_at)).toEqual([null, null]);
    const descending = await walk((cursor) => listSubscriptions(ctx, { client_id: client.id, limit: 3, sort: '-expires', cursor }));
    expect(descending.map((s) => s.id)).toEqual(ascending.map((s) => s.id).reverse());
  });

  it('clients by email, descending, page by page', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    for (const name of ['mia', 'ann', 'zoe', 'bea', 'kim']) await make.client({ email: `${name}.${t}@mail.example` });
    const all = await walk((cursor) => listClients(bed.ctx(), { limit: 2, q: t, sort: '-email', cursor }));
    expect(all.map((c) => c.email.split('.')[0])).toEqual(['zoe', 'mia', 'kim', 'bea', 'ann']);
  });

  it('a cursor belongs to its sort: another sort, or an unknown key, is a validation error that reads nothing', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    for (let i = 0; i < 3; i++) await make.client({ email: `c${i}.${t}@mail.example` });
    const first = await listClients(bed.ctx(), { limit: 1, q: t, sort: 'email' });
    expect(first.next_cursor).not.toBeNull();
    const wrong = await refusal(listClients(bed.ctx(), { limit: 1, q: t, sort: 'created', cursor: first.next_cursor as string }));
    expect(wrong.type).toBe('validation');
    expect(wrong.message).toMatch(/another sort/);
    const unknown = await refusal(listClients(bed.ctx(), { limit: 1, sort: 'password_hash' }));
    expect(unknown.type).toBe('validation');
  });

  it('the default sort still takes the id-only cursors every list issued before sorting', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await make.client({ email: `v1-${i}.${t}@mail.example` }));
    const legacy = Buffer.from(JSON.stringify({ v: 1, after: made[0]?.id })).toString('base64url');
    const page = await listClients(bed.ctx(), { limit: 50, q: t, cursor: legacy });
    expect(page.items.map((c) => c.id)).toEqual([made[1]?.id, made[2]?.id]);
  });
});

describe('the total of a list', () => {
  it('is counted exactly on the first page and absent from later pages', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    for (let i = 0; i < 5; i++) await make.client({ email: `n${i}.${t}@mail.example` });
    const first = await listClients(bed.ctx(), { limit: 2, q: t });
    expect({ total: first.total, exact: first.total_exact }).toEqual({ total: 5, exact: true });
    const second = await listClients(bed.ctx(), { limit: 2, q: t, cursor: first.next_cursor as string });
    expect({ total: second.total, exact: second.total_exact }).toEqual({ total: null, exact: null });
  });

  it('past the exact limit is the planner estimate, labelled not exact, never below what was counted', async () => {
    const make = fixtures(bed.ctx());
    const t = tag();
    for (let i = 0; i < 6; i++) await make.client({ email: `e${i}.${t}@mail.example` });
    const query = bed.deps.db.selectFrom('clients').selectAll().where('email', 'like', `%${t}%`);
    expect(await countTotal(bed.deps.db, query, { exactUpTo: 10 })).toEqual({ count: 6, exact: true });
    const estimated = await countTotal(bed.deps.db, query, { exactUpTo: 3 });
    expect(estimated.exact).toBe(false);
    expect(estimated.count).toBeGreaterThanOrEqual(4);
  });
});

it('the system actor reads the same lists (the shell)', async () => {
  const page = await listClients(bed.ctx(SYSTEM), { limit: 1 });
  expect(page.total).toBeGreaterThanOrEqual(page.items.length);
});
