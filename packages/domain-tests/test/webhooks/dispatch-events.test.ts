import {
  CreateWebhookInput,
  createWebhook,
  type DomainEvent,
  dispatchEvents,
  JOBS,
  type MailMessage,
  parseInput,
  recordEvent,
  unitOfWork,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The events outbox and its dispatch (docs/notifications.md) at the verbs recordEvent and
// dispatchEvents: an event exists exactly when its unit committed; dispatch writes one delivery
// per enabled endpoint subscribed to its type and a mail per owner for the mailed types, once,
// however many dispatches run. Delivering those rows is delivery-attempts.test.ts.
let bed: DomainTestbed;
const mails: MailMessage[] = [];
let stopMail: () => Promise<void>;
let owner: string;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_SMTP_URL: 'smtp://127.0.0.1:1', SVC_PUBLIC_BASE_URL: 'https://cp.example.com' } });
  stopMail = await bed.deps.jobs.consume(JOBS.mailSend, async (m) => {
    mails.push(m);
  });
  owner = (await fixtures(bed.ctx()).admin({ role: 'owner' })).email;
  await fixtures(bed.ctx()).admin({ role: 'admin' });
});
afterAll(async () => {
  await stopMail?.();
  await bed?.close();
});

let n = 0;
type Registered = Extract<DomainEvent, { type: 'client.registered' }>;
const registered = (): Registered => ({
  type: 'client.registered',
  payload: { client_id: `cli_${++n}`, email: `c${n}@example.com`, status: 'active', method: 'password', registration_mode: 'open' },
});
const outdated = (): DomainEvent => ({
  type: 'node.agent_outdated',
  payload: { node_id: `nod_${++n}`, name: `n${n}`, agent_version: '0.0.1', previous_agent_version: null, release: '0.2.0' },
});

const record = (...events: DomainEvent[]) =>
  unitOfWork(bed.deps, async (uow) => {
    const ids: string[] = [];
    for (const e of events) ids.push(await recordEvent(uow, e, bed.deps.clock.now()));
    return ids;
  });

const endpoint = async (input: { event_types?: string[] | null; enabled?: boolean }) =>
  (await createWebhook(bed.ctx(), parseInput(CreateWebhookInput, { url: 'https://hooks.example.com/in', ...input }))).id;

const deliveriesOf = (eventId: string) =>
  bed.deps.db
    .selectFrom('webhook_deliveries')
    .select(['endpoint_id', 'event_id'])
    .where('event_id', '=', eventId)
    .orderBy('endpoint_id')
    .execute();

/** Every undispatched event dispatched (those of earlier tests too). */
const dispatchAll = () => dispatchEvents(bed.deps);

describe('events.dispatch', () => {
  it('one delivery per enabled endpoint subscribed to the type: all types (null), the type named; not another type, not a disabled endpoint', async () => {
    const all = await endpoint({ event_types: null });
    const mine = await endpoint({ event_types: ['client.registered'] });
    const other = await endpoint({ event_types: ['payment.succeeded'] });
    const off = await endpoint({ event_types: null, enabled: false });
    const [id] = await record(registered());
    await dispatchAll();
    const got = (await deliveriesOf(id as string)).map((d) => d.endpoint_id);
    expect(got).toContain(all);
    expect(got).toContain(mine);
    expect(got).not.toContain(other);
    expect(got).not.toContain(off);
    expect(new Set(got).size).toBe(got.length);
  });

  it('an event whose unit rolled back does not exist: nothing is delivered or mailed', async () => {
    await endpoint({ event_types: null });
    const before = await bed.deps.db.selectFrom('events').select('id').execute();
    const failed = await unitOfWork(bed.deps, async (uow) => {
      await recordEvent(uow, registered(), bed.deps.clock.now());
      throw new Error('the change failed after the event was recorded');
    }).catch((err: Error) => err.message);
    expect(failed).toMatch(/failed/);
    expect(await bed.deps.db.selectFrom('events').select('id').execute()).toEqual(before);
  });

  it('client.registered mails every owner (not other admins by default), once; a type not in notify.email_events mails nobody', async () => {
    const e = registered();
    const [id] = await record(e, outdated());
    await dispatchAll();
    const about = () => mails.filter((m) => m.category === 'event:client.registered' && m.subject.endsWith(e.payload.email));
    await until('the owner mail', () => about().length > 0);
    expect(about().map((m) => m.to)).toEqual([owner]);
    expect(mails.some((m) => m.category === 'event:node.agent_outdated')).toBe(false);
    const row = await bed.deps.db
      .selectFrom('events')
      .select('dispatched_at')
      .where('id', '=', id as string)
      .executeTakeFirstOrThrow();
    expect(row.dispatched_at).not.toBeNull();
  });

  it('dispatches at once and again give each event its effects once: one delivery per endpoint, one mail per owner', async () => {
    const ep = await endpoint({ event_types: ['client.registered'] });
    const events = Array.from({ length: 30 }, registered);
    const ids = await record(...events);
    const results = await Promise.all([dispatchAll(), dispatchAll(), dispatchAll()]);
    await dispatchAll();
    for (const id of ids) expect((await deliveriesOf(id)).filter((d) => d.endpoint_id === ep)).toHaveLength(1);
    expect(results.reduce((sum, r) => sum + r.events, 0)).toBeGreaterThanOrEqual(30);
    const last = events.at(-1)?.payload.email ?? '';
    await until('the mails', () => mails.some((m) => m.subject.endsWith(last)));
    for (const e of events) expect(mails.filter((m) => m.subject.endsWith(e.payload.email))).toHaveLength(1);
  });
});
