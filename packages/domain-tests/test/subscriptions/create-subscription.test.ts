import { createHash } from 'node:crypto';
import { CreateSubscriptionInput, createSubscription, getSubscription, getSubscriptionLink, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedNode } from '../customers-support.ts';
import { auditOf, bumpsOf } from '../support.ts';

const BASE = 'https://panel.example.com';
const DAY = 86_400_000;

let bed: DomainTestbed;
let client: string;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: `${BASE}/` } });
  client = (await fixtures(bed.ctx()).client()).id;
});
afterAll(() => bed.close());

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
const tokenOf = (link: string) => link.slice(`${BASE}/sub/`.length);
const row = (id: string) => bed.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const create = (input: Record<string, unknown>) =>
  createSubscription(bed.ctx(), parseInput(CreateSubscriptionInput, { client_id: client, access_group_ids: [], ...input }));

describe('createSubscription: credentials and a link of its own', () => {
  it('a new subscription is active, starts its period now with nothing used, and keeps what it was given', async () => {
    const { groups } = await servedNode(bed.ctx());
    const expires = new Date(bed.clock.now().getTime() + 30 * DAY).toISOString();
    const sub = await create({
      access_group_ids: groups,
      traffic_limit_bytes: 10_000_000_000,
      expires_at: expires,
      renewal: 'month',
      note: 'trial',
    });
    const now = bed.clock.now().toISOString();
    expect(sub).toMatchObject({
      client_id: client,
      status: 'active',
      access_group_ids: groups,
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
    expect(sub.id).toMatch(/^sub_[0-9a-z]{26}$/);
    const r = await row(sub.id);
    for (const secret of [r.vless_uuid, r.vmess_uuid, r.trojan_password, r.shadowsocks_password, r.token_hash, r.token_enc])
      expect(JSON.stringify(sub)).not.toContain(secret);
    expect(await getSubscription(bed.ctx(), sub.id)).toEqual(sub);
  });

  it('defaults: renewal no_reset, unlimited, never expires, no note', async () => {
    expect(await create({})).toMatchObject({
      renewal: 'no_reset',
      traffic_limit_bytes: null,
      expires_at: null,
      note: null,
      access_group_ids: [],
    });
  });

  it('the link is {public_base_url}/sub/{token}, the token 32 random bytes base64url; the database keeps its SHA-256 and a sealed copy', async () => {
    const sub = await create({});
    expect(sub.link).toMatch(new RegExp(`^${BASE}/sub/[A-Za-z0-9_-]{43}$`));
    const t = tokenOf(sub.link);
    expect(Buffer.from(t, 'base64url')).toHaveLength(32);
    const r = await row(sub.id);
    expect(r.token_hash).toBe(sha256(t));
    expect(r.token_enc).not.toContain(t);
    expect(bed.deps.secrets.open(r.token_enc)).toBe(t);
    expect(await getSubscriptionLink(bed.ctx(), sub.id)).toEqual({ url: sub.link });
  });

  it('tokens and credentials are unguessable: distinct across subscriptions, the right sizes and formats', async () => {
    const rows = [];
    for (let i = 0; i < 20; i++) rows.push(await row((await create({})).id));
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

  it('an unknown client or access group is refused naming each field, and nothing is created or audited', async () => {
    const { groups } = await servedNode(bed.ctx());
    const audited = async () =>
      (await bed.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'subscription.created').execute()).length;
    const before = await audited();
    await expect(create({ client_id: 'cli_nobody', access_group_ids: [groups[0], 'agr_missing', 'agr_gone'] })).rejects.toMatchObject({
      type: 'validation',
      errors: {
        client_id: expect.stringMatching(/cli_nobody/),
        'access_group_ids.1': expect.stringMatching(/agr_missing/),
        'access_group_ids.2': expect.stringMatching(/agr_gone/),
      },
    });
    expect(await bed.deps.db.selectFrom('subscriptions').select('id').where('client_id', '=', 'cli_nobody').execute()).toEqual([]);
    expect(await audited()).toBe(before);
  });

  it('expires_at must lie ahead of the clock: a past time or now is refused', async () => {
    for (const at of [new Date(bed.clock.now().getTime() - 1000), bed.clock.now()]) {
      await expect(create({ expires_at: at.toISOString() })).rejects.toMatchObject({
        type: 'validation',
        errors: { expires_at: 'must be in the future' },
      });
    }
  });

  it('traffic_limit_bytes 0 is a limit reached at once: limited; an explicit null is unlimited', async () => {
    expect((await create({ traffic_limit_bytes: 0 })).status).toBe('limited');
    expect((await create({ traffic_limit_bytes: null, expires_at: null })).status).toBe('active');
  });
});

describe('createSubscription: the nodes it reaches', () => {
  it('bumps the nodes of its access groups and no other; the audit entry names them and the groups', async () => {
    const a = await servedNode(bed.ctx());
    const other = await servedNode(bed.ctx());
    let id = '';
    expect(
      await bumpsOf(bed.ctx(), [a.node, other.node], async () => {
        id = (await create({ access_group_ids: a.groups })).id;
      }),
    ).toEqual({ [a.node]: 1, [other.node]: 0 });
    const [entry] = await auditOf(bed.ctx(), id);
    expect(entry?.action).toBe('subscription.created');
    expect(entry?.details).toMatchObject({ nodes_bumped: [a.node], access_group_ids: a.groups });
  });

  it('a subscription without access groups reaches no node', async () => {
    const n = await servedNode(bed.ctx());
    expect(await bumpsOf(bed.ctx(), [n.node], () => create({}))).toEqual({ [n.node]: 0 });
  });
});
