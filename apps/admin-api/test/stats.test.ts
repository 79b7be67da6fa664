import { randomUUID } from 'node:crypto';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let viewer: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  viewer = (await adminWithRole(s, token, 'viewer')).access_token;
});
afterAll(() => s.stop());

let seq = 0;
const H = 3600 * 1000;

async function insertNode(admin_status: 'enabled' | 'disabled', connectivity: 'online' | 'offline'): Promise<string> {
  const now = s.clock.now();
  const id = `nod_stats${++seq}`;
  await s.deps.db
    .insertInto('nodes')
    .values({
      id,
      name: id,
      address: `${id}.example.net`,
      admin_status,
      connectivity,
      last_apply_error: null,
      last_seen_at: null,
      agent_version: null,
      xray_version: null,
      hostname: null,
      os: null,
      arch: null,
      status: null,
      enroll_token_hash: null,
      enroll_token_expires_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

async function insertSubscription(status: 'active' | 'limited' | 'expired' | 'disabled'): Promise<string> {
  const now = s.clock.now();
  const clientId = `cli_stats${++seq}`;
  await s.deps.db
    .insertInto('clients')
    .values({
      id: clientId,
      email: `${clientId}@example.com`,
      password_hash: null,
      email_verified_at: now,
      status: 'active',
      note: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const id = `sub_stats${++seq}`;
  await s.deps.db
    .insertInto('subscriptions')
    .values({
      id,
      client_id: clientId,
      status,
      traffic_limit_bytes: null,
      expires_at: null,
      period_started_at: now,
      vless_uuid: randomUUID(),
      vmess_uuid: randomUUID(),
      trojan_password: randomUUID(),
      shadowsocks_password: randomUUID(),
      token_hash: randomUUID(),
      token_enc: 'sealed',
      credentials_rotated_at: null,
      plan_id: null,
      note: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

const usage = (subscription_id: string, node_id: string, hour: Date, uplink_bytes: number, downlink_bytes: number) =>
  s.deps.db.insertInto('usage_hourly').values({ subscription_id, node_id, hour, uplink_bytes, downlink_bytes }).execute();

const overview = (query = '', as = token) => s.api.get(`/api/v1/stats/overview${query}`, { token: as });

describe('GET /stats/overview', () => {
  it('with nothing yet: zeros, and the default period is the 24 h ending now', async () => {
    const res = await overview();
    expect(res.status).toBe(200);
    const now = s.clock.now();
    expect(res.body).toEqual({
      nodes: { total: 0, online: 0, offline: 0, enabled: 0, disabled: 0 },
      subscriptions: { total: 0, active: 0, limited: 0, expired: 0, disabled: 0 },
      traffic: {
        from: new Date(now.getTime() - 24 * H).toISOString(),
        to: now.toISOString(),
        uplink_bytes: 0,
        downlink_bytes: 0,
        total_bytes: 0,
      },
      certificates: { total: 0, expired: 0, expiring_within_30_days: 0, next_expiry: null, failing: 0 },
      revenue: { from: new Date(now.getTime() - 24 * H).toISOString(), to: now.toISOString(), by_currency: [] },
    });
  });

  it('counts nodes by connectivity and admin_status, subscriptions by status', async () => {
    await insertNode('enabled', 'online');
    await insertNode('enabled', 'online');
    await insertNode('enabled', 'offline');
    await insertNode('disabled', 'offline');
    await insertNode('disabled', 'online');
    for (const st of ['active', 'active', 'active', 'limited', 'expired', 'expired', 'disabled'] as const) await insertSubscription(st);
    const res = await overview();
    expect(res.body.nodes).toEqual({ total: 5, online: 3, offline: 2, enabled: 3, disabled: 2 });
    expect(res.body.subscriptions).toEqual({ total: 7, active: 3, limited: 1, expired: 2, disabled: 1 });
  });

  it('sums the traffic of hourly rows with hour in [from, to): from inclusive, to exclusive', async () => {
    const n1 = await insertNode('enabled', 'online');
    const n2 = await insertNode('enabled', 'online');
    const a = await insertSubscription('active');
    const b = await insertSubscription('limited');
    const from = new Date('2020-03-01T00:00:00Z');
    const to = new Date('2020-03-02T00:00:00Z');
    await usage(a, n1, new Date(from.getTime() - H), 1_000_000, 1_000_000); // before: out
    await usage(a, n1, from, 100, 1_000); // at from: in
    await usage(a, n2, from, 5, 50); // another node, same hour: in
    await usage(b, n1, new Date(from.getTime() + 5 * H), 7_000_000_000, 9_000_000_000); // beyond 32 bits: in
    await usage(b, n2, new Date(to.getTime() - H), 2, 20); // last hour: in
    await usage(b, n2, to, 3_000, 30_000); // at to: out

    const res = await overview(`?from=${from.toISOString()}&to=${to.toISOString()}`);
    expect(res.status).toBe(200);
    expect(res.body.traffic).toEqual({
      from: from.toISOString(),
      to: to.toISOString(),
      uplink_bytes: 100 + 5 + 7_000_000_000 + 2,
      downlink_bytes: 1_000 + 50 + 9_000_000_000 + 20,
      total_bytes: 100 + 5 + 7_000_000_000 + 2 + 1_000 + 50 + 9_000_000_000 + 20,
    });

    // Offsets are accepted and answered in UTC.
    const shifted = await overview(
      `?from=${encodeURIComponent('2020-03-01T02:00:00+02:00')}&to=${encodeURIComponent('2020-03-01T01:00:00Z')}`,
    );
    expect(shifted.status).toBe(200);
    expect(shifted.body.traffic).toMatchObject({
      from: from.toISOString(),
      to: '2020-03-01T01:00:00.000Z',
      uplink_bytes: 105,
      downlink_bytes: 1_050,
    });
  });

  it('defaults: only from -> to is now; only to -> from is 24 h before it', async () => {
    const n = await insertNode('enabled', 'offline');
    const sub = await insertSubscription('active');
    const now = s.clock.now();
    const lastHour = new Date(Math.floor(now.getTime() / H) * H);
    await usage(sub, n, lastHour, 11, 22);
    await usage(sub, n, new Date(lastHour.getTime() - 30 * H), 1_000, 1_000); // outside the default 24 h

    const byDefault = await overview();
    expect(byDefault.body.traffic).toMatchObject({ to: now.toISOString(), uplink_bytes: 11, downlink_bytes: 22, total_bytes: 33 });

    const onlyFrom = await overview(`?from=${new Date(lastHour.getTime() - 48 * H).toISOString()}`);
    expect(onlyFrom.body.traffic).toMatchObject({ to: now.toISOString(), uplink_bytes: 1_011, downlink_bytes: 1_022 });

    const to = new Date(lastHour.getTime() - 29 * H);
    const onlyTo = await overview(`?to=${to.toISOString()}`);
    expect(onlyTo.body.traffic).toMatchObject({
      from: new Date(to.getTime() - 24 * H).toISOString(),
      to: to.toISOString(),
      uplink_bytes: 1_000,
      downlink_bytes: 1_000,
    });
  });

  it('an empty or reversed period, or a malformed time, is a 400 naming the field', async () => {
    const t = '2020-03-01T00:00:00.000Z';
    for (const q of [`?from=${t}&to=${t}`, `?from=2020-03-02T00:00:00Z&to=${t}`]) {
      const res = await overview(q);
      expect(res.status, q).toBe(400);
      expect(res.body.type).toBe('urn:svc:problem:validation');
      expect(res.body.errors.from).toBe('must be before to');
    }
    for (const [q, field] of [
      ['?from=yesterday', 'query.from'],
      ['?to=2020-13-01T00:00:00Z', 'query.to'],
      ['?from=2020-03-01', 'query.from'],
    ] as const) {
      const res = await overview(q);
      expect(res.status, q).toBe(400);
      expect(res.body.errors[field], q).toBeDefined();
    }
  });

  it('readers only: a viewer reads it; without a token it is a 401', async () => {
    expect((await overview('', viewer)).status).toBe(200);
    expect((await s.api.get('/api/v1/stats/overview')).status).toBe(401);
  });
});

describe('OpenAPI document', () => {
  it('declares the overview with its query and response schema, for readers', async () => {
    const { paths } = (await s.api.get('/api/v1/openapi.json')).body;
    const op = paths['/api/v1/stats/overview'].get;
    expect(op['x-roles']).toEqual(['owner', 'admin', 'viewer']);
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['from', 'to']);
    expect(op.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/StatsOverview');
  });
});
