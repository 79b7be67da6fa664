import { createHash, randomBytes } from 'node:crypto';
import { expireDueSubscriptions, SYSTEM, withActor } from '@svc/domain';
import { adminWithRole, login, OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

const BASE = 'https://panel.example.com';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let s: TestServer;
let token: string;
let client: string;
beforeAll(async () => {
  s = await startAdminApi({
    env: { SVC_PUBLIC_BASE_URL: `${BASE}/` },
    config: { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } },
  });
  token = (await setupOwner(s)).access_token;
  client = (await s.api.post('/api/v1/clients', { email: 'sub-owner@example.com' }, { token })).body.id;
});
afterAll(() => s.stop());

/** Moves the fake clock; past the access token's 15 minutes, signs in again. */
async function advance(ms: number) {
  s.clock.advance(ms);
  if (ms >= 60_000) token = (await login(s, OWNER.email, OWNER.password)).access_token;
}

const uniq = () => randomBytes(5).toString('hex');
const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
const api = {
  create: (body: Record<string, unknown>) => s.api.post('/api/v1/subscriptions', body, { token }),
  get: (id: string) => s.api.get(`/api/v1/subscriptions/${id}`, { token }),
  patch: (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/subscriptions/${id}`, body, { token }),
  del: (id: string) => s.api.delete(`/api/v1/subscriptions/${id}`, { token }),
  rotate: (id: string) => s.api.post(`/api/v1/subscriptions/${id}/rotate-credentials`, undefined, { token }),
  link: (id: string) => s.api.get(`/api/v1/subscriptions/${id}/link`, { token }),
  usage: (id: string, q = '') => s.api.get(`/api/v1/subscriptions/${id}/usage${q}`, { token }),
};

interface Sub {
  id: string;
  status: string;
  link: string;
  access_group_ids: string[];
  [k: string]: unknown;
}

async function newSub(extra: Record<string, unknown> = {}): Promise<Sub> {
  const res = await api.create({ client_id: client, access_group_ids: [], ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const row = (id: string) => s.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const tokenOf = (link: string) => link.slice(`${BASE}/sub/`.length);
const inFuture = (ms: number) => new Date(s.clock.now().getTime() + ms).toISOString();

/** A node with `inbounds` inbounds, each in its own new access group; rows inserted directly. */
async function fleetNode(inbounds = 1) {
  const now = s.clock.now();
  const db = s.deps.db;
  const node = `nod_${uniq()}`;
  await db
    .insertInto('nodes')
    .values({ id: node, name: node, address: `${node}.example.com`, created_at: now, updated_at: now })
    .execute();
  const profile = `ipr_${uniq()}`;
  await db
    .insertInto('inbound_profiles')
    .values({
      id: profile,
      name: profile,
      protocol: 'vless',
      stream: '{}',
      sniffing: JSON.stringify({ enabled: false, dest_override: [], route_only: false }),
      vless_flow: null,
      shadowsocks_method: null,
      reality_private_key_enc: null,
      certificate_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const groups: string[] = [];
  for (let i = 0; i < inbounds; i++) {
    const inbound = `inb_${uniq()}`;
    await db
      .insertInto('inbounds')
      .values({
        id: inbound,
        node_id: node,
        profile_id: profile,
        tag: inbound,
        port: 1000 + i,
        listen: null,
        host: null,
        chain_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const group = await accessGroup([inbound]);
    groups.push(group);
  }
  return { node, group: groups[0] as string, groups };
}

async function accessGroup(inboundIds: string[]) {
  const now = s.clock.now();
  const group = `agr_${uniq()}`;
  await s.deps.db.insertInto('access_groups').values({ id: group, name: group, created_at: now, updated_at: now }).execute();
  for (const inbound_id of inboundIds)
    await s.deps.db.insertInto('access_group_inbounds').values({ access_group_id: group, inbound_id }).execute();
  return group;
}

async function revisions(nodes: string[]): Promise<Record<string, number>> {
  const rows = await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', nodes).execute();
  return Object.fromEntries(rows.map((r) => [r.id, r.desired_revision]));
}

/** Runs `change` and returns by how much each node's desired_revision moved. */
async function bumpsOf(nodes: string[], change: () => Promise<unknown>) {
  const before = await revisions(nodes);
  await change();
  const after = await revisions(nodes);
  return Object.fromEntries(nodes.map((n) => [n, (after[n] ?? 0) - (before[n] ?? 0)]));
}

const auditActions = async (id: string) =>
  (await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', id).orderBy('id').execute()).map((r) => r.action);

describe('POST /subscriptions: credentials and link of its own', () => {
  it('creates an active subscription; the view has every field and no credential', async () => {
    const { group } = await fleetNode();
    const expires = inFuture(30 * DAY);
    const res = await api.create({
      client_id: client,
      access_group_ids: [group],
      traffic_limit_bytes: 10_000_000_000,
      expires_at: expires,
      renewal: 'month',
      note: 'trial',
    });
    expect(res.status).toBe(201);
    const now = s.clock.now().toISOString();
    expect(res.body).toMatchObject({
      client_id: client,
      status: 'active',
      access_group_ids: [group],
      traffic_limit_bytes: 10_000_000_000,
      used_bytes: 0,
      expires_at: expires,
      renewal: 'month',
      period_started_at: now,
      credentials_rotated_at: null,
      note: 'trial',
      created_at: now,
      updated_at: now,
    });
    expect(res.body.id).toMatch(/^sub_[0-9a-z]{26}$/);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'access_group_ids',
        'client_id',
        'created_at',
        'credentials_rotated_at',
        'expires_at',
        'id',
        'link',
        'note',
        'period_started_at',
        'renewal',
        'status',
        'traffic_limit_bytes',
        'updated_at',
        'used_bytes',
      ].sort(),
    );
    const r = await row(res.body.id);
    for (const secret of [r.vless_uuid, r.vmess_uuid, r.trojan_password, r.shadowsocks_password, r.token_hash, r.token_enc]) {
      expect(res.text).not.toContain(secret);
    }
    expect((await api.get(res.body.id)).body).toEqual(res.body);
  });

  it('defaults: renewal no_reset, unlimited, never expires, no note', async () => {
    const sub = await newSub();
    expect(sub).toMatchObject({ renewal: 'no_reset', traffic_limit_bytes: null, expires_at: null, note: null, access_group_ids: [] });
  });

  it('link is {public_base_url}/sub/{token}, token 32 random bytes base64url; the database keeps its SHA-256 and a sealed copy', async () => {
    const sub = await newSub();
    expect(sub.link).toMatch(new RegExp(`^${BASE}/sub/[A-Za-z0-9_-]{43}$`));
    const t = tokenOf(sub.link);
    expect(Buffer.from(t, 'base64url')).toHaveLength(32);
    const r = await row(sub.id);
    expect(r.token_hash).toBe(sha256(t));
    expect(r.token_enc).not.toContain(t);
    expect(s.deps.secrets.open(r.token_enc)).toBe(t);
    expect((await api.link(sub.id)).body).toEqual({ url: sub.link });
  });

  it('tokens and credentials are unguessable: distinct across subscriptions, the right sizes and formats', async () => {
    const rows = [];
    for (let i = 0; i < 20; i++) rows.push(await row((await newSub()).id));
    for (const key of ['token_hash', 'vless_uuid', 'vmess_uuid', 'trojan_password', 'shadowsocks_password'] as const) {
      expect(new Set(rows.map((r) => r[key])).size, key).toBe(rows.length);
    }
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const r of rows) {
      expect(r.vless_uuid).toMatch(uuid);
      expect(r.vmess_uuid).toMatch(uuid);
      expect(r.vless_uuid).not.toBe(r.vmess_uuid);
      expect(r.trojan_password).toMatch(/^[A-Za-z0-9_-]{32}$/); // 24 bytes = 192 bits
      // 32 bytes in standard base64: a 2022-blake3-aes-256-gcm / chacha20 key as is.
      expect(r.shadowsocks_password).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(r.shadowsocks_password, 'base64')).toHaveLength(32);
    }
  });

  it('an unknown client or access group is 400 naming each field', async () => {
    const { group } = await fleetNode();
    const res = await api.create({ client_id: 'cli_nobody', access_group_ids: [group, 'agr_missing', 'agr_gone'] });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('urn:svc:problem:validation');
    expect(res.body.errors).toEqual({
      client_id: expect.stringMatching(/cli_nobody/),
      'access_group_ids.1': expect.stringMatching(/agr_missing/),
      'access_group_ids.2': expect.stringMatching(/agr_gone/),
    });
    expect(await s.deps.db.selectFrom('subscriptions').select('id').where('client_id', '=', 'cli_nobody').execute()).toEqual([]);
  });

  it('validates each field', async () => {
    const ok = { client_id: client, access_group_ids: [] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ access_group_ids: [] }, 'client_id'],
      [{ client_id: client }, 'access_group_ids'],
      [{ ...ok, access_group_ids: 'agr_x' }, 'access_group_ids'],
      [{ ...ok, traffic_limit_bytes: -1 }, 'traffic_limit_bytes'],
      [{ ...ok, traffic_limit_bytes: 1.5 }, 'traffic_limit_bytes'],
      [{ ...ok, traffic_limit_bytes: '100' }, 'traffic_limit_bytes'],
      [{ ...ok, expires_at: 'tomorrow' }, 'expires_at'],
      [{ ...ok, expires_at: '2030-01-01T00:00:00' }, 'expires_at'],
      [{ ...ok, expires_at: new Date(s.clock.now().getTime() - 1000).toISOString() }, 'expires_at'],
      [{ ...ok, expires_at: s.clock.now().toISOString() }, 'expires_at'],
      [{ ...ok, renewal: 'year' }, 'renewal'],
      [{ ...ok, note: 'n'.repeat(2001) }, 'note'],
      [{ ...ok, status: 'disabled' }, '(body)'],
    ];
    for (const [body, field] of cases) {
      const res = await api.create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
  });

  it('traffic_limit_bytes 0 is a limit reached at once: limited; an explicit null is unlimited', async () => {
    expect((await newSub({ traffic_limit_bytes: 0 })).status).toBe('limited');
    expect((await newSub({ traffic_limit_bytes: null, expires_at: null })).status).toBe('active');
  });
});

describe('status: disabled > expired > limited > active, stored on every write and computed on every read', () => {
  it('reaching the limit shows limited; raising the limit makes it active again', async () => {
    const sub = await newSub({ traffic_limit_bytes: 1000 });
    await s.deps.db.updateTable('subscriptions').set({ used_bytes: 1000 }).where('id', '=', sub.id).execute();
    expect((await api.get(sub.id)).body).toMatchObject({ status: 'limited', used_bytes: 1000 });
    const raised = await api.patch(sub.id, { traffic_limit_bytes: 5000 });
    expect(raised.body.status).toBe('active');
    expect((await row(sub.id)).status).toBe('active');
    const lowered = await api.patch(sub.id, { traffic_limit_bytes: 999 });
    expect(lowered.body.status).toBe('limited');
    expect((await row(sub.id)).status).toBe('limited');
    expect((await api.patch(sub.id, { traffic_limit_bytes: null })).body.status).toBe('active');
  });

  it('the admin disables and enables; disabled outranks expired and limited, active gives back the computed status', async () => {
    const sub = await newSub({ traffic_limit_bytes: 0 });
    expect(sub.status).toBe('limited');
    const off = await api.patch(sub.id, { status: 'disabled' });
    expect(off.body.status).toBe('disabled');
    await advance(1000);
    expect((await api.patch(sub.id, { expires_at: new Date(s.clock.now().getTime() - 1).toISOString() })).body.status).toBe('disabled');
    expect((await api.patch(sub.id, { expires_at: null })).body.status).toBe('disabled');
    expect((await api.patch(sub.id, { status: 'active' })).body.status).toBe('limited');
  });

  it('limited and expired cannot be set by PATCH', async () => {
    const sub = await newSub();
    for (const status of ['limited', 'expired', 'paused']) {
      const res = await api.patch(sub.id, { status });
      expect(res.status).toBe(400);
      expect(res.body.errors.status).toBeDefined();
    }
  });

  it('expiry by time alone: reads show expired at once (the stored row lags until the next write), filters agree', async () => {
    const sub = await newSub({ expires_at: inFuture(HOUR) });
    await advance(HOUR);
    expect((await api.get(sub.id)).body.status).toBe('expired');
    expect((await row(sub.id)).status).toBe('active');
    const list = async (status: string) =>
      (await s.api.get(`/api/v1/subscriptions?client_id=${client}&status=${status}&limit=200`, { token })).body.items.map((x: Sub) => x.id);
    expect(await list('expired')).toContain(sub.id);
    expect(await list('active')).not.toContain(sub.id);
    // The next write stores it.
    expect((await api.patch(sub.id, { note: 'seen' })).body.status).toBe('expired');
    expect((await row(sub.id)).status).toBe('expired');
    // Moving expires_at into the future revives it.
    expect((await api.patch(sub.id, { expires_at: inFuture(DAY) })).body.status).toBe('active');
  });

  it('a past expires_at set by PATCH expires the subscription now', async () => {
    const sub = await newSub();
    const res = await api.patch(sub.id, { expires_at: new Date(s.clock.now().getTime() - 1000).toISOString() });
    expect(res.body.status).toBe('expired');
  });

  it('expireDueSubscriptions writes down time-caused expiries, bumps their nodes and audits as system', async () => {
    const a = await fleetNode();
    const other = await fleetNode();
    const due = await newSub({ access_group_ids: [a.group], expires_at: inFuture(HOUR) });
    const later = await newSub({ access_group_ids: [other.group], expires_at: inFuture(10 * DAY) });
    await advance(2 * HOUR);
    let count = 0;
    const bumps = await bumpsOf([a.node, other.node], async () => {
      count = await expireDueSubscriptions(withActor(s.deps, SYSTEM));
    });
    expect(count).toBeGreaterThanOrEqual(1);
    expect(bumps).toEqual({ [a.node]: 1, [other.node]: 0 });
    expect((await row(due.id)).status).toBe('expired');
    expect((await row(later.id)).status).toBe('active');
    const entry = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', due.id)
      .where('action', '=', 'subscription.expired')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ actor_type: 'system', actor_id: null });
    expect(await expireDueSubscriptions(withActor(s.deps, SYSTEM))).toBe(0);
  });
});

describe('PATCH /subscriptions/{id}: merge', () => {
  it('updates renewal, limit, expiry, groups and note; absent fields stay', async () => {
    const g1 = (await fleetNode()).group;
    const g2 = (await fleetNode()).group;
    const sub = await newSub({ access_group_ids: [g1], note: 'keep', traffic_limit_bytes: 10 });
    await advance(1000);
    const res = await api.patch(sub.id, { renewal: 'week', access_group_ids: [g2, g1, g2] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      renewal: 'week',
      note: 'keep',
      traffic_limit_bytes: 10,
      access_group_ids: [g1, g2].sort(),
      updated_at: s.clock.now().toISOString(),
      created_at: sub.created_at,
      link: sub.link,
    });
    expect((await api.patch(sub.id, { access_group_ids: [] })).body.access_group_ids).toEqual([]);
    expect((await api.patch(sub.id, { note: null })).body.note).toBeNull();
  });

  it('refuses unknown access groups (400 per index), unknown fields and bad values; 404 for an unknown id', async () => {
    const sub = await newSub();
    const unknown = await api.patch(sub.id, { access_group_ids: ['agr_nope'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors['access_group_ids.0']).toMatch(/agr_nope/);
    for (const [body, field] of [
      [{ renewal: 'hourly' }, 'renewal'],
      [{ traffic_limit_bytes: -5 }, 'traffic_limit_bytes'],
      [{ expires_at: 'soon' }, 'expires_at'],
      [{ client_id: client }, '(body)'],
      [{ used_bytes: 0 }, '(body)'],
    ] as const) {
      const res = await api.patch(sub.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await api.patch('sub_doesnotexist', { note: 'x' })).status).toBe(404);
  });
});

describe('POST /subscriptions/{id}/rotate-credentials', () => {
  it('re-issues uuids, passwords and the link token; the old token no longer matches any subscription', async () => {
    const sub = await newSub();
    const before = await row(sub.id);
    await advance(5000);
    const res = await api.rotate(sub.id);
    expect(res.status).toBe(200);
    expect(res.body.credentials_rotated_at).toBe(s.clock.now().toISOString());
    expect(res.body.link).not.toBe(sub.link);
    expect(res.body.link).toMatch(new RegExp(`^${BASE}/sub/[A-Za-z0-9_-]{43}$`));
    const after = await row(sub.id);
    for (const key of ['vless_uuid', 'vmess_uuid', 'trojan_password', 'shadowsocks_password', 'token_hash', 'token_enc'] as const) {
      expect(after[key], key).not.toBe(before[key]);
    }
    expect(after.token_hash).toBe(sha256(tokenOf(res.body.link)));
    const oldHash = sha256(tokenOf(sub.link));
    expect(await s.deps.db.selectFrom('subscriptions').select('id').where('token_hash', '=', oldHash).execute()).toEqual([]);
    expect((await api.link(sub.id)).body.url).toBe(res.body.link);
    expect((await api.rotate('sub_doesnotexist')).status).toBe(404);
  });
});

describe('GET /subscriptions/{id}/link', () => {
  it('returns {url} of the form {public_base_url}/sub/{token}; 404 for an unknown id', async () => {
    const sub = await newSub();
    const res = await api.link(sub.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: `${BASE}/sub/${tokenOf(sub.link)}` });
    expect((await api.link('sub_doesnotexist')).status).toBe(404);
  });
});

describe('GET /subscriptions/{id}/usage: sums of usage_hourly per hour or day', () => {
  const at = (iso: string) => new Date(iso);
  async function usage(sub: string, node: string, hour: string, up: number, down: number) {
    await s.deps.db
      .insertInto('usage_hourly')
      .values({ subscription_id: sub, node_id: node, hour: at(hour), uplink_bytes: up, downlink_bytes: down })
      .execute();
  }

  it('sums over nodes per hour, every hour in the range present, other subscriptions left out', async () => {
    const sub = await newSub();
    const other = await newSub();
    await usage(sub.id, 'nod_a', '2026-03-01T10:00:00Z', 100, 1000);
    await usage(sub.id, 'nod_b', '2026-03-01T10:00:00Z', 5_000_000_000, 7);
    await usage(sub.id, 'nod_a', '2026-03-01T12:00:00Z', 1, 2);
    await usage(sub.id, 'nod_a', '2026-03-01T13:00:00Z', 9, 9); // outside: to is exclusive
    await usage(other.id, 'nod_a', '2026-03-01T10:00:00Z', 999, 999);
    const res = await api.usage(sub.id, '?from=2026-03-01T10:00:00Z&to=2026-03-01T13:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      subscription_id: sub.id,
      granularity: 'hour',
      from: '2026-03-01T10:00:00.000Z',
      to: '2026-03-01T13:00:00.000Z',
      items: [
        { start: '2026-03-01T10:00:00.000Z', uplink_bytes: 5_000_000_100, downlink_bytes: 1007 },
        { start: '2026-03-01T11:00:00.000Z', uplink_bytes: 0, downlink_bytes: 0 },
        { start: '2026-03-01T12:00:00.000Z', uplink_bytes: 1, downlink_bytes: 2 },
      ],
    });
  });

  it('granularity=day sums whole UTC days; from is rounded down and to up', async () => {
    const sub = await newSub();
    await usage(sub.id, 'nod_a', '2026-03-01T00:00:00Z', 1, 10);
    await usage(sub.id, 'nod_a', '2026-03-01T23:00:00Z', 2, 20);
    await usage(sub.id, 'nod_b', '2026-03-02T05:00:00Z', 4, 40);
    const res = await api.usage(sub.id, '?granularity=day&from=2026-03-01T06:30:00Z&to=2026-03-02T01:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body.from).toBe('2026-03-01T00:00:00.000Z');
    expect(res.body.to).toBe('2026-03-03T00:00:00.000Z');
    expect(res.body.items).toEqual([
      { start: '2026-03-01T00:00:00.000Z', uplink_bytes: 3, downlink_bytes: 30 },
      { start: '2026-03-02T00:00:00.000Z', uplink_bytes: 4, downlink_bytes: 40 },
    ]);
  });

  it('granularity=month sums UTC calendar months (28 to 31 days) over their boundaries; from rounded down, to up', async () => {
    const sub = await newSub();
    await usage(sub.id, 'nod_a', '2026-01-01T00:00:00Z', 1, 10);
    await usage(sub.id, 'nod_b', '2026-01-31T23:00:00Z', 2, 20);
    await usage(sub.id, 'nod_a', '2026-02-01T00:00:00Z', 4, 40);
    await usage(sub.id, 'nod_a', '2026-02-28T23:00:00Z', 8, 80);
    await usage(sub.id, 'nod_a', '2026-03-01T00:00:00Z', 16, 160);
    await usage(sub.id, 'nod_a', '2026-04-01T00:00:00Z', 32, 320); // outside: to rounds up to April 1st
    const res = await api.usage(sub.id, '?granularity=month&from=2026-01-15T10:00:00Z&to=2026-03-20T00:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body.granularity).toBe('month');
    expect(res.body.from).toBe('2026-01-01T00:00:00.000Z');
    expect(res.body.to).toBe('2026-04-01T00:00:00.000Z');
    expect(res.body.items).toEqual([
      { start: '2026-01-01T00:00:00.000Z', uplink_bytes: 3, downlink_bytes: 30 },
      { start: '2026-02-01T00:00:00.000Z', uplink_bytes: 12, downlink_bytes: 120 },
      { start: '2026-03-01T00:00:00.000Z', uplink_bytes: 16, downlink_bytes: 160 },
    ]);
    const exact = await api.usage(sub.id, '?granularity=month&from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z');
    expect(exact.body.items).toEqual([{ start: '2026-02-01T00:00:00.000Z', uplink_bytes: 12, downlink_bytes: 120 }]);
    const decade = await api.usage(sub.id, '?granularity=month&from=2020-01-01T00:00:00Z&to=2029-12-31T00:00:00Z');
    expect(decade.status).toBe(200);
    expect(decade.body.items).toHaveLength(120);
    expect((await api.usage(sub.id, '?granularity=month&from=2016-01-01T00:00:00Z&to=2026-03-01T00:00:00Z')).status).toBe(400);
  });

  it('defaults: hour granularity over the last 24 hours', async () => {
    const sub = await newSub();
    const res = await api.usage(sub.id);
    expect(res.status).toBe(200);
    expect(res.body.granularity).toBe('hour');
    expect(res.body.items.length).toBeGreaterThanOrEqual(24);
    expect(res.body.items.length).toBeLessThanOrEqual(25);
  });

  it('refuses from >= to, more than 31 days of hours, a bad granularity or time; 404 for an unknown id', async () => {
    const sub = await newSub();
    const bad = async (q: string, field: string) => {
      const res = await api.usage(sub.id, q);
      expect(res.status, q).toBe(400);
      expect(Object.keys(res.body.errors), q).toContain(field);
    };
    await bad('?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'query.from');
    await bad('?from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'query.from');
    await bad('?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z', 'query.to');
    await bad('?granularity=minute', 'query.granularity');
    await bad('?from=yesterday', 'query.from');
    const max = await api.usage(sub.id, '?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z');
    expect(max.status).toBe(200);
    expect(max.body.items).toHaveLength(31 * 24);
    expect((await api.usage(sub.id, '?granularity=day&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z')).status).toBe(200);
    expect((await api.usage('sub_doesnotexist')).status).toBe(404);
  });
});

describe('GET /subscriptions: keyset pages and filters', () => {
  it('walks every subscription exactly once, oldest first', async () => {
    for (let i = 0; i < 12; i++) await newSub();
    const all = (await s.deps.db.selectFrom('subscriptions').select('id').orderBy('id').execute()).map((r) => r.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/v1/subscriptions?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await s.api.get(q, { token });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(7);
      seen.push(...res.body.items.map((x: Sub) => x.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect((await s.api.get('/api/v1/subscriptions?cursor=garbage', { token })).status).toBe(400);
  });

  it('filters by client_id and by each status', async () => {
    const other = (await s.api.post('/api/v1/clients', { email: `f-${uniq()}@example.com` }, { token })).body.id as string;
    const mk = (extra: Record<string, unknown>) =>
      api.create({ client_id: other, access_group_ids: [], ...extra }).then((r) => r.body as Sub);
    const active = await mk({});
    const limited = await mk({ traffic_limit_bytes: 0 });
    const disabled = await mk({});
    await api.patch(disabled.id, { status: 'disabled' });
    const expired = await mk({ expires_at: inFuture(1000) });
    await advance(1000);

    const ids = async (q: string) => (await s.api.get(`/api/v1/subscriptions?limit=200&${q}`, { token })).body.items.map((x: Sub) => x.id);
    expect(await ids(`client_id=${other}`)).toEqual([active.id, limited.id, disabled.id, expired.id]);
    expect(await ids(`client_id=${other}&status=active`)).toEqual([active.id]);
    expect(await ids(`client_id=${other}&status=limited`)).toEqual([limited.id]);
    expect(await ids(`client_id=${other}&status=disabled`)).toEqual([disabled.id]);
    expect(await ids(`client_id=${other}&status=expired`)).toEqual([expired.id]);
    const byStatus = await s.api.get('/api/v1/subscriptions?status=limited&limit=200', { token });
    for (const x of byStatus.body.items) expect(x.status).toBe('limited');
    expect(byStatus.body.items.map((x: Sub) => x.id)).toContain(limited.id);
    expect((await s.api.get('/api/v1/subscriptions?status=paused', { token })).body.errors['query.status']).toBeDefined();
  });
});

describe('DELETE /subscriptions/{id}', () => {
  it('removes it with its group links and usage rows', async () => {
    const { group } = await fleetNode();
    const sub = await newSub({ access_group_ids: [group] });
    await s.deps.db
      .insertInto('usage_hourly')
      .values({ subscription_id: sub.id, node_id: 'nod_x', hour: new Date('2026-01-01T00:00:00Z'), uplink_bytes: 1, downlink_bytes: 1 })
      .execute();
    expect((await api.del(sub.id)).status).toBe(204);
    expect((await api.get(sub.id)).status).toBe(404);
    expect(await s.deps.db.selectFrom('subscription_access_groups').selectAll().where('subscription_id', '=', sub.id).execute()).toEqual(
      [],
    );
    expect(await s.deps.db.selectFrom('usage_hourly').selectAll().where('subscription_id', '=', sub.id).execute()).toEqual([]);
    expect((await api.del(sub.id)).status).toBe(404);
  });
});

describe('roles: a viewer reads subscriptions but changes nothing', () => {
  it('viewer gets 200 on reads and 403 on every write', async () => {
    const viewer = (await adminWithRole(s, token, 'viewer')).access_token;
    const sub = await newSub();
    for (const path of ['', `/${sub.id}`, `/${sub.id}/link`, `/${sub.id}/usage`]) {
      expect((await s.api.get(`/api/v1/subscriptions${path}`, { token: viewer })).status, path).toBe(200);
    }
    const writes = [
      s.api.post('/api/v1/subscriptions', { client_id: client, access_group_ids: [] }, { token: viewer }),
      s.api.patch(`/api/v1/subscriptions/${sub.id}`, { status: 'disabled' }, { token: viewer }),
      s.api.post(`/api/v1/subscriptions/${sub.id}/rotate-credentials`, undefined, { token: viewer }),
      s.api.delete(`/api/v1/subscriptions/${sub.id}`, { token: viewer }),
    ];
    for (const res of await Promise.all(writes)) expect(res.status).toBe(403);
    expect((await api.get(sub.id)).body).toEqual(sub);
  });
});

describe('audit: every subscription mutation is recorded, never with a secret', () => {
  it('records created, updated, credentials_rotated and deleted by the acting admin', async () => {
    const sub = await newSub();
    await api.patch(sub.id, { status: 'disabled' });
    const rotated = (await api.rotate(sub.id)).body as Sub;
    await api.del(sub.id);
    expect(await auditActions(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated',
      'subscription.credentials_rotated',
      'subscription.deleted',
    ]);
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', sub.id).execute();
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', entity_type: 'subscription' });
    const text = JSON.stringify(rows);
    expect(text).not.toContain(tokenOf(sub.link));
    expect(text).not.toContain(tokenOf(rotated.link));
    const updated = rows.find((r) => r.action === 'subscription.updated');
    expect(updated?.details).toMatchObject({ changed: ['status'], status: { from: 'active', to: 'disabled' } });
  });

  it('a refused create (400) writes nothing', async () => {
    const before = await s.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'subscription.created').execute();
    expect((await api.create({ client_id: 'cli_nobody', access_group_ids: [] })).status).toBe(400);
    const after = await s.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'subscription.created').execute();
    expect(after.length).toBe(before.length);
  });
});

describe('revisions: exactly the nodes of the subscription inbounds move', () => {
  it('create, status change, group change (before and after), rotate and delete bump; note, renewal and a limit that changes no status do not', async () => {
    const n1 = await fleetNode();
    const n2 = await fleetNode(2);
    const n3 = await fleetNode();
    const nodes = [n1.node, n2.node, n3.node];
    // A group spanning two nodes; n3 is never granted.
    const both = await accessGroup(
      (
        await s.deps.db
          .selectFrom('access_group_inbounds')
          .select('inbound_id')
          .where('access_group_id', 'in', [n1.group, n2.group])
          .execute()
      ).map((r) => r.inbound_id),
    );

    let sub = '';
    expect(
      await bumpsOf(nodes, async () => {
        sub = (await newSub({ access_group_ids: [n1.group] })).id;
      }),
    ).toEqual({ [n1.node]: 1, [n2.node]: 0, [n3.node]: 0 });

    for (const quiet of [
      { note: 'n' },
      { renewal: 'day' },
      { traffic_limit_bytes: 1_000_000 },
      { access_group_ids: [n1.group] },
      { status: 'active' },
    ]) {
      expect(await bumpsOf(nodes, () => api.patch(sub, quiet)), JSON.stringify(quiet)).toEqual({
        [n1.node]: 0,
        [n2.node]: 0,
        [n3.node]: 0,
      });
    }

    // Groups replaced: the nodes it leaves and the nodes it joins.
    expect(await bumpsOf(nodes, () => api.patch(sub, { access_group_ids: [n2.groups[1]] }))).toEqual({
      [n1.node]: 1,
      [n2.node]: 1,
      [n3.node]: 0,
    });
    expect(await bumpsOf(nodes, () => api.patch(sub, { access_group_ids: [both, n2.groups[1]] }))).toEqual({
      [n1.node]: 1,
      [n2.node]: 1,
      [n3.node]: 0,
    });

    // Status changes: limit reached, admin disable/enable.
    expect(await bumpsOf(nodes, () => api.patch(sub, { traffic_limit_bytes: 0 }))).toEqual({ [n1.node]: 1, [n2.node]: 1, [n3.node]: 0 });
    expect(await bumpsOf(nodes, () => api.patch(sub, { traffic_limit_bytes: null, status: 'disabled' }))).toEqual({
      [n1.node]: 1,
      [n2.node]: 1,
      [n3.node]: 0,
    });
    expect(await bumpsOf(nodes, () => api.patch(sub, { status: 'active' }))).toEqual({ [n1.node]: 1, [n2.node]: 1, [n3.node]: 0 });

    expect(await bumpsOf(nodes, () => api.rotate(sub))).toEqual({ [n1.node]: 1, [n2.node]: 1, [n3.node]: 0 });
    expect(await bumpsOf(nodes, () => api.del(sub))).toEqual({ [n1.node]: 1, [n2.node]: 1, [n3.node]: 0 });
  });

  it('a subscription without access groups reaches no node', async () => {
    const n = await fleetNode();
    expect(await bumpsOf([n.node], () => newSub())).toEqual({ [n.node]: 0 });
  });

  it('the audit entry names the nodes bumped', async () => {
    const n = await fleetNode();
    const sub = await newSub({ access_group_ids: [n.group] });
    const entry = await s.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('entity_id', '=', sub.id)
      .where('action', '=', 'subscription.created')
      .executeTakeFirstOrThrow();
    expect(entry.details).toMatchObject({ nodes_bumped: [n.node], access_group_ids: [n.group] });
  });
});
