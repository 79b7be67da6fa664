import { mountAdminApi } from '@svc/admin-api';
import { SYSTEM, withActor } from '@svc/domain';
import {
  adminWithRole,
  fixtures,
  login,
  OWNER,
  openEventStream,
  setupOwner,
  startTestServer,
  type TestServer,
  uniqueName,
} from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type WorkerService } from '../src/worker.ts';

// Issue 35.3 over real HTTP: POST /subscriptions/bulk and /clients/bulk (dry run, job), the job's
// progress at GET /bulk-jobs/{id} and as `bulk_job` on the admin event stream, run by the worker;
// bad input a problem naming the field; viewers and read-only tokens refused.
let s: TestServer;
let worker: WorkerService;
let owner: string;
beforeAll(async () => {
  s = await startTestServer({ mount: mountAdminApi });
  await setupOwner(s);
  owner = (await login(s, OWNER.email, OWNER.password)).access_token;
  worker = createWorker(s.runtime, { only: ['bulk.run'] });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await s?.stop();
});

async function tagged(n: number) {
  const f = fixtures(withActor(s.deps, SYSTEM));
  const note = uniqueName('http-bulk');
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await f.subscription({ note, traffic_limit_bytes: 1_000 })).id);
  return { note, ids };
}

describe('POST /api/v1/subscriptions/bulk', () => {
  it('dry_run answers 200 with the count and a sample, and changes nothing', async () => {
    const { note, ids } = await tagged(3);
    const res = await s.api.post(
      '/api/v1/subscriptions/bulk',
      { filter: { q: note }, action: { type: 'delete' }, dry_run: true },
      { token: owner },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, count: 3 });
    expect(res.body.sample.map((x: { id: string }) => x.id)).toEqual([...ids].sort());
    for (const id of ids) expect((await s.api.get(`/api/v1/subscriptions/${id}`, { token: owner })).status).toBe(200);
  });

  it('a job answers 202 with its Location; the worker runs it; progress on GET /bulk-jobs/{id} and the event stream', async () => {
    const { note, ids } = await tagged(4);
    const stream = await openEventStream(`${s.url}/api/v1/events`, { token: owner });
    await stream.waitFor((e) => e.some((x) => x.event === 'ready'));
    const res = await s.api.post(
      '/api/v1/subscriptions/bulk',
      { filter: { q: note }, action: { type: 'add_traffic', bytes: 500 } },
      { token: owner },
    );
    expect(res.status, res.text).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/bulk-jobs/${res.body.id}`);
    await stream.waitFor((e) => e.some((x) => x.event === 'bulk_job' && JSON.parse(x.data).status === 'done'), 10_000);
    const done = stream.events.filter((x) => x.event === 'bulk_job').map((x) => JSON.parse(x.data));
    expect(done.at(-1)).toEqual({ id: res.body.id, status: 'done', done: 4, total: 4, skipped: 0 });
    await stream.close();
    expect((await s.api.get(`/api/v1/bulk-jobs/${res.body.id}`, { token: owner })).body).toMatchObject({ status: 'done', done: 4 });
    expect((await s.api.get('/api/v1/bulk-jobs', { token: owner })).body.items[0]).toMatchObject({ id: res.body.id });
    for (const id of ids) expect((await s.api.get(`/api/v1/subscriptions/${id}`, { token: owner })).body.traffic_limit_bytes).toBe(1_500);
  });

  it('bad input is a 400 problem naming the field, and no job is made', async () => {
    const cases: Array<[unknown, string]> = [
      [{ action: { type: 'reset_usage' } }, 'ids'],
      [{ ids: ['sub_x'], filter: {}, action: { type: 'reset_usage' } }, 'ids'],
      [{ filter: {}, action: { type: 'extend_expiry', days: -1 } }, 'action.days'],
      [{ filter: {}, action: { type: 'nope' } }, 'action.type'],
      [{ filter: { status: 'weird' }, action: { type: 'reset_usage' } }, 'filter.status'],
      [{ ids: Array.from({ length: 20_001 }, () => 'sub_x'), action: { type: 'reset_usage' } }, 'ids'],
    ];
    const before = (await s.api.get('/api/v1/bulk-jobs', { token: owner })).body.items.length;
    for (const [body, field] of cases) {
      const res = await s.api.post('/api/v1/subscriptions/bulk', body, { token: owner });
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(Object.keys(res.body.errors ?? {})).toContain(field);
    }
    expect((await s.api.get('/api/v1/bulk-jobs', { token: owner })).body.items.length).toBe(before);
  });

  it('a viewer, or a token with subscriptions:read, cannot run one (403); a subscriptions:write token can', async () => {
    const viewer = await adminWithRole(s, owner, 'viewer', 'bulk-viewer@example.com');
    const vt = (await login(s, viewer.email, viewer.password)).access_token;
    const body = { ids: ['sub_nothere'], action: { type: 'reset_usage' }, dry_run: true };
    expect((await s.api.post('/api/v1/subscriptions/bulk', body, { token: vt })).status).toBe(403);
    const read = await s.api.post('/api/v1/api-tokens', { name: 'bulk-read', scopes: ['subscriptions:read'] }, { token: owner });
    const write = await s.api.post('/api/v1/api-tokens', { name: 'bulk-write', scopes: ['subscriptions:write'] }, { token: owner });
    expect((await s.api.post('/api/v1/subscriptions/bulk', body, { token: read.body.token })).status).toBe(403);
    const ok = await s.api.post('/api/v1/subscriptions/bulk', body, { token: write.body.token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ dry_run: true, count: 0 });
  });
});

describe('POST /api/v1/clients/bulk', () => {
  it('disables the clients a filter selects, skipping those the state machine does not allow', async () => {
    const f = fixtures(withActor(s.deps, SYSTEM));
    const note = uniqueName('client-bulk');
    const active = [await f.client({ note }), await f.client({ note })];
    const pending = await f.client({ note, status: 'pending' });
    const res = await s.api.post('/api/v1/clients/bulk', { filter: { q: note }, action: { type: 'disable' } }, { token: owner });
    expect(res.status, res.text).toBe(202);
    let job = res.body;
    for (let i = 0; i < 100 && job.status !== 'done'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await s.api.get(`/api/v1/bulk-jobs/${res.body.id}`, { token: owner })).body;
    }
    expect(job).toMatchObject({ status: 'done', total: 3, done: 3, skipped: 1 });
    for (const c of active) expect((await s.api.get(`/api/v1/clients/${c.id}`, { token: owner })).body.status).toBe('disabled');
    expect((await s.api.get(`/api/v1/clients/${pending.id}`, { token: owner })).body.status).toBe('pending');
  });
});
