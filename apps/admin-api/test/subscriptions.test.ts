import { ingestUsageReport, withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, login, OWNER, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// HTTP concerns of /subscriptions: status codes, problem documents, field errors, the link
// and usage routes, pages and filters, roles. The rules (status, credentials, revisions, audit,
// usage sums) are proven on the use cases in packages/domain-tests/test/subscriptions.

const BASE = 'https://panel.example.com';

let s: TestServer;
let token: string;
let client: string;
let make: Fixtures;
beforeAll(async () => {
  s = await startAdminApi({
    env: { SVC_PUBLIC_BASE_URL: `${BASE}/` },
    config: { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } },
  });
  token = (await setupOwner(s)).access_token;
  make = fixtures(withActor(s.deps, TEST_OWNER));
  client = (await make.client()).id;
});
afterAll(() => s.stop());

/** Moves the fake clock; past the access token's 15 minutes, signs in again. */
async function advance(ms: number) {
  s.clock.advance(ms);
  if (ms >= 60_000) token = (await login(s, OWNER.email, OWNER.password)).access_token;
}

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
  [k: string]: unknown;
}

const newSub = (extra: Parameters<Fixtures['subscription']>[0] = {}) => make.subscription({ client_id: client, ...extra });
const tokenOf = (link: string) => link.slice(`${BASE}/sub/`.length);
const inFuture = (ms: number) => new Date(s.clock.now().getTime() + ms).toISOString();

describe('POST /subscriptions', () => {
  it('answers 201 with the view: every field, no credential; GET answers the same', async () => {
    const res = await api.create({ client_id: client, access_group_ids: [], traffic_limit_bytes: 10_000_000_000, renewal: 'month' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      client_id: client,
      status: 'active',
      traffic_limit_bytes: 10_000_000_000,
      renewal: 'month',
      starts_on_first_use: null,
    });
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'access_group_ids',
        'client_id',
        'created_at',
        'credentials_rotated_at',
        'device_limit',
        'download_bps',
        'expires_at',
        'id',
        'link',
        'note',
        'period_started_at',
        'renewal',
        'starts_on_first_use',
        'status',
        'traffic_limit_bytes',
        'updated_at',
        'upload_bps',
        'used_bytes',
      ].sort(),
    );
    const r = await s.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    for (const secret of [r.vless_uuid, r.vmess_uuid, r.trojan_password, r.shadowsocks_password, r.token_hash, r.token_enc]) {
      expect(res.text).not.toContain(secret);
    }
    expect((await api.get(res.body.id)).body).toEqual(res.body);
  });

  it('an unknown client or access group is a 400 validation problem naming each field', async () => {
    const res = await api.create({ client_id: 'cli_nobody', access_group_ids: ['agr_missing'] });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('urn:svc:problem:validation');
    expect(res.body.errors).toEqual({
      client_id: expect.stringMatching(/cli_nobody/),
      'access_group_ids.0': expect.stringMatching(/agr_missing/),
    });
  });

  it('takes a device limit and speed caps, and null for none (issue 36)', async () => {
    const res = await api.create({
      client_id: client,
      access_group_ids: [],
      device_limit: 1000,
      upload_bps: 8_000,
      download_bps: 100_000_000_000,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ device_limit: 1000, upload_bps: 8_000, download_bps: 100_000_000_000 });
    const patched = await s.api.patch(`/api/v1/subscriptions/${res.body.id}`, { device_limit: null, upload_bps: null }, { token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ device_limit: null, upload_bps: null, download_bps: 100_000_000_000 });
  });

  it('a bad body is a 400 problem naming each field', async () => {
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
      // Issue 36: device limit 1..1000, caps 8,000..100,000,000,000 bit/s (null: none).
      [{ ...ok, device_limit: 0 }, 'device_limit'],
      [{ ...ok, device_limit: 1001 }, 'device_limit'],
      [{ ...ok, device_limit: 2.5 }, 'device_limit'],
      [{ ...ok, upload_bps: 7_999 }, 'upload_bps'],
      [{ ...ok, download_bps: 100_000_000_001 }, 'download_bps'],
      [{ ...ok, download_bps: '1000000' }, 'download_bps'],
    ];
    for (const [body, field] of cases) {
      const res = await api.create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
  });
});

describe('PATCH /subscriptions/{id}', () => {
  it('answers 200 with the merged view', async () => {
    const sub = await newSub({ note: 'keep' });
    const res = await api.patch(sub.id, { renewal: 'week', status: 'disabled' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: sub.id, renewal: 'week', status: 'disabled', note: 'keep', link: sub.link });
  });

  it('refuses unknown access groups (400 per index), computed statuses, unknown fields and bad values; 404 for an unknown id', async () => {
    const sub = await newSub();
    const unknown = await api.patch(sub.id, { access_group_ids: ['agr_nope'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors['access_group_ids.0']).toMatch(/agr_nope/);
    for (const [body, field] of [
      [{ status: 'limited' }, 'status'],
      [{ status: 'expired' }, 'status'],
      [{ status: 'paused' }, 'status'],
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

describe('POST /subscriptions/{id}/rotate-credentials and GET /subscriptions/{id}/link', () => {
  it('rotate answers 200 with the view carrying the new link, which GET /link then answers; 404 for an unknown id', async () => {
    const sub = await newSub();
    expect((await api.link(sub.id)).body).toEqual({ url: sub.link });
    const res = await api.rotate(sub.id);
    expect(res.status).toBe(200);
    expect(res.body.link).not.toBe(sub.link);
    expect(res.body.link).toMatch(new RegExp(`^${BASE}/sub/[A-Za-z0-9_-]{43}$`));
    const link = await api.link(sub.id);
    expect(link.status).toBe(200);
    expect(link.body).toEqual({ url: `${BASE}/sub/${tokenOf(res.body.link)}` });
    expect((await api.rotate('sub_doesnotexist')).status).toBe(404);
    expect((await api.link('sub_doesnotexist')).status).toBe(404);
  });
});

describe('GET /subscriptions/{id}/usage', () => {
  it('answers the series for the query: from, to and granularity as query parameters', async () => {
    const { node, group } = await make.servingNode();
    const sub = await newSub({ access_group_ids: [group.id] });
    s.clock.set(new Date('2026-03-01T10:15:00Z'));
    await ingestUsageReport(s.deps, node.id, {
      report_id: 1n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 100n, downlink_bytes: 1000n }],
    });
    token = (await login(s, OWNER.email, OWNER.password)).access_token;
    const res = await api.usage(sub.id, '?granularity=day&from=2026-03-01T06:30:00Z&to=2026-03-02T01:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      subscription_id: sub.id,
      granularity: 'day',
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-03T00:00:00.000Z',
      items: [
        { start: '2026-03-01T00:00:00.000Z', uplink_bytes: 100, downlink_bytes: 1000 },
        { start: '2026-03-02T00:00:00.000Z', uplink_bytes: 0, downlink_bytes: 0 },
      ],
    });
    expect((await api.usage(sub.id)).body.granularity).toBe('hour');
  });

  it('a bad query is a 400 problem naming the query parameter; 404 for an unknown id', async () => {
    const sub = await newSub();
    const bad = async (q: string, field: string) => {
      const res = await api.usage(sub.id, q);
      expect(res.status, q).toBe(400);
      expect(Object.keys(res.body.errors), q).toContain(field);
    };
    await bad('?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'query.from');
    await bad('?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z', 'query.to');
    await bad('?granularity=minute', 'query.granularity');
    await bad('?from=yesterday', 'query.from');
    expect((await api.usage('sub_doesnotexist')).status).toBe(404);
  });
});

describe('GET /subscriptions/{id}/usage/nodes', () => {
  it('answers the traffic per node in the range (who used which node), from what the nodes reported', async () => {
    const a = await make.servingNode();
    const b = await make.servingNode();
    const sub = await newSub({ access_group_ids: [a.group.id, b.group.id] });
    s.clock.set(new Date('2026-04-01T10:15:00Z'));
    await ingestUsageReport(s.deps, a.node.id, {
      report_id: 1n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 10n, downlink_bytes: 90n }],
    });
    await ingestUsageReport(s.deps, b.node.id, {
      report_id: 1n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 1n, downlink_bytes: 2n }],
    });
    s.clock.set(new Date('2026-04-03T10:15:00Z'));
    await ingestUsageReport(s.deps, a.node.id, {
      report_id: 2n,
      entries: [{ subscription_id: sub.id, uplink_bytes: 5n, downlink_bytes: 5n }],
    });
    token = (await login(s, OWNER.email, OWNER.password)).access_token;
    const all = await s.api.get(`/api/v1/subscriptions/${sub.id}/usage/nodes`, { token });
    expect(all.status).toBe(200);
    const byNode = Object.fromEntries(
      all.body.items.map((i: { node_id: string; uplink_bytes: number; downlink_bytes: number }) => [
        i.node_id,
        [i.uplink_bytes, i.downlink_bytes],
      ]),
    );
    expect(byNode).toEqual({ [a.node.id]: [15, 95], [b.node.id]: [1, 2] });
    const first = await s.api.get(`/api/v1/subscriptions/${sub.id}/usage/nodes?from=2026-04-01T00:00:00Z&to=2026-04-02T00:00:00Z`, {
      token,
    });
    expect(first.body.items.find((i: { node_id: string }) => i.node_id === a.node.id)).toMatchObject({
      node_name: a.node.name,
      uplink_bytes: 10,
      downlink_bytes: 90,
    });
    const reversed = await s.api.get(`/api/v1/subscriptions/${sub.id}/usage/nodes?from=2026-04-02T00:00:00Z&to=2026-04-01T00:00:00Z`, {
      token,
    });
    expect(reversed.status).toBe(400);
    expect((await s.api.get('/api/v1/subscriptions/sub_doesnotexist/usage/nodes', { token })).status).toBe(404);
  });
});

describe('GET /subscriptions: keyset pages and filters', () => {
  it('walks every subscription exactly once, oldest first; a cursor it did not issue is a 400', async () => {
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
    const other = (await make.client()).id;
    const active = await make.subscription({ client_id: other });
    const limited = await make.subscription({ client_id: other, traffic_limit_bytes: 0 });
    const disabled = await make.subscription({ client_id: other, status: 'disabled' });
    const expired = await make.subscription({ client_id: other, expires_at: inFuture(1000) });
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
  it('answers 204, then 404', async () => {
    const sub = await newSub();
    expect((await api.del(sub.id)).status).toBe(204);
    expect((await api.get(sub.id)).status).toBe(404);
    expect((await api.del(sub.id)).status).toBe(404);
  });
});

describe('roles: a viewer reads subscriptions but changes nothing', () => {
  it('viewer gets 200 on reads and 403 on every write', async () => {
    const viewer = (await adminWithRole(s, token, 'viewer')).access_token;
    const sub = await newSub();
    for (const path of ['', `/${sub.id}`, `/${sub.id}/usage`]) {
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

describe('viewers see that a link exists and its status, never the token (issue 12.10)', () => {
  it('list and get answer link null to a viewer, with status and credentials_rotated_at; GET /link is 403; owners and admins get the link', async () => {
    const viewer = (await adminWithRole(s, token, 'viewer')).access_token;
    const admin = (await adminWithRole(s, token, 'admin')).access_token;
    const sub = await newSub();
    expect((await api.rotate(sub.id)).status).toBe(200);
    const full = (await api.get(sub.id)).body;
    const token_ = full.link.split('/sub/')[1] as string;

    const seen = await s.api.get(`/api/v1/subscriptions/${sub.id}`, { token: viewer });
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ ...full, link: null });
    expect(seen.body.status).toBe('active');
    expect(seen.body.credentials_rotated_at).not.toBeNull();
    const listed = await s.api.get(`/api/v1/subscriptions?client_id=${full.client_id}&limit=200`, { token: viewer });
    expect(listed.status).toBe(200);
    expect(listed.body.items.length).toBeGreaterThan(0);
    for (const item of listed.body.items) expect(item.link).toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(token_);

    const link = await s.api.get(`/api/v1/subscriptions/${sub.id}/link`, { token: viewer });
    expect(link.status).toBe(403);
    expect(link.headers.get('content-type')).toContain('application/problem+json');
    expect(link.text).not.toContain(token_);

    for (const who of [token, admin]) {
      expect((await s.api.get(`/api/v1/subscriptions/${sub.id}/link`, { token: who })).body).toEqual({ url: full.link });
      expect((await s.api.get(`/api/v1/subscriptions/${sub.id}`, { token: who })).body.link).toBe(full.link);
    }
  });
});
