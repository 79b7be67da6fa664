import { randomUUID } from 'node:crypto';
import { applyImport, type ImportBatch, type ImportedUser, type ImportReport, subscriptionsWithCounters } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Issue 34 item 1 at the verb applyImport: every source user becomes a client and a
// subscription with the source's credentials verbatim and its terms; a second import updates and
// never duplicates; a dry run writes nothing; what has no counterpart is reported with why.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed?.close());

let n = 0;
const user = (over: Partial<ImportedUser> = {}): ImportedUser => {
  const username = over.username ?? `user${++n}`;
  return {
    key: username.toLowerCase(),
    username,
    linkKey: null,
    email: null,
    status: 'active',
    usedBytes: 1_000,
    lifetimeUsedBytes: 3_000,
    trafficLimitBytes: 50_000,
    renewal: 'month',
    expiresAt: new Date(bed.clock.now().getTime() + 30 * 86_400_000),
    onHold: null,
    credentials: {
      vless: { uuid: randomUUID(), flow: '' },
      vmess: { uuid: randomUUID() },
      trojan: { password: `trojan-${username}` },
      shadowsocks: { password: `ss-${username}`, method: 'aes-256-gcm' },
    },
    inboundTags: ['VLESS TCP', 'VMess WS'],
    note: null,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    linksRevokedAt: null,
    ...over,
  };
};
const inbound = (tag: string, protocol: 'vless' | 'vmess' | 'trojan' | 'shadowsocks', port: number) => ({
  tag,
  protocol,
  port,
  listen: null,
  streamSettings: null,
  shadowsocksMethod: null,
  shadowsocksServerKey: null,
  sniffing: null,
});
const batch = (users: ImportedUser[], over: Partial<ImportBatch> = {}): ImportBatch => ({
  source: 'marzban',
  sourceVersion: '2b231de97dc3',
  linkSecret: 'a'.repeat(64),
  users,
  inbounds: [inbound('VLESS TCP', 'vless', 8443), inbound('VMess WS', 'vmess', 8080), inbound('Trojan TCP', 'trojan', 8444)],
  notCarried: [],
  ...over,
});

const subscriptionOf = (id: string) => subscriptionsWithCounters(bed.deps.db).where('id', '=', id).executeTakeFirstOrThrow();
const groupsOf = async (id: string) =>
  (
    await bed.deps.db
      .selectFrom('subscription_access_groups as sag')
      .innerJoin('access_groups as g', 'g.id', 'sag.access_group_id')
      .select('g.name')
      .where('sag.subscription_id', '=', id)
      .orderBy('g.name')
      .execute()
  ).map((r) => r.name);
const counts = async () => ({
  clients: (await bed.deps.db.selectFrom('clients').select('id').execute()).length,
  subscriptions: (await bed.deps.db.selectFrom('subscriptions').select('id').execute()).length,
  groups: (await bed.deps.db.selectFrom('access_groups').select('id').execute()).length,
  sources: (await bed.deps.db.selectFrom('import_sources').select('id').execute()).length,
});
const outcomeOf = (report: ImportReport, username: string) => report.users.find((u) => u.username === username);

describe('applyImport', () => {
  it('makes a client and a subscription per user: credentials verbatim, limit, usage, renewal, expiry, note, one access group per source inbound', async () => {
    const alice = user({ username: 'Alice', note: 'VIP' });
    const report = await applyImport(bed.ctx(), batch([alice]), { sourceName: 'first' });
    expect(report).toMatchObject({
      dry_run: false,
      source: { kind: 'marzban', name: 'first', version: '2b231de97dc3', links_verifiable: true },
      counts: { users_created: 1, users_updated: 0, access_groups_created: 3 },
      not_carried: [],
    });
    const outcome = outcomeOf(report, 'Alice');
    expect(outcome).toMatchObject({
      action: 'create',
      client_email: 'alice@first.import.invalid',
      status: 'active',
      access_groups: ['VLESS TCP', 'VMess WS'],
    });
    const sub = await subscriptionOf(outcome?.subscription_id as string);
    expect(sub).toMatchObject({
      vless_uuid: alice.credentials.vless?.uuid,
      vmess_uuid: alice.credentials.vmess?.uuid,
      trojan_password: 'trojan-Alice',
      shadowsocks_password: 'ss-Alice',
      traffic_limit_bytes: 50_000,
      renewal: 'month',
      note: 'VIP',
      status: 'active',
    });
    expect(Number(sub.used_bytes)).toBe(1_000);
    expect(Number(sub.lifetime_used_bytes)).toBe(3_000);
    expect(sub.expires_at).toEqual(alice.expiresAt);
    expect(await groupsOf(sub.id)).toEqual(['first: VLESS TCP', 'first: VMess WS']);
    const row = await bed.deps.db.selectFrom('imported_users').selectAll().where('subscription_id', '=', sub.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ source_key: 'alice', username: 'Alice', source_created_at: alice.createdAt, links_revoked_at: null });
    const source = await bed.deps.db.selectFrom('import_sources').selectAll().where('name', '=', 'first').executeTakeFirstOrThrow();
    expect(bed.deps.secrets.open(source.link_secret_enc as string)).toBe('a'.repeat(64));
  });

  it('keeps each state: disabled by the operator, expired, over its limit', async () => {
    const past = new Date(bed.clock.now().getTime() - 86_400_000);
    const report = await applyImport(
      bed.ctx(),
      batch([
        user({ username: 'off', status: 'disabled' }),
        user({ username: 'late', status: 'expired', expiresAt: past }),
        user({ username: 'full', status: 'limited', usedBytes: 50_000, trafficLimitBytes: 50_000 }),
      ]),
      { sourceName: 'states' },
    );
    expect(report.users.map((u) => [u.username, u.status])).toEqual([
      ['off', 'disabled'],
      ['late', 'expired'],
      ['full', 'limited'],
    ]);
  });

  it('a second import updates what the first made and duplicates nothing; credentials the source lacks stay; groups an operator added stay', async () => {
    const bob = user({ username: 'bob', credentials: { vmess: { uuid: randomUUID() } } });
    const first = await applyImport(bed.ctx(), batch([bob]), { sourceName: 'again' });
    const id = outcomeOf(first, 'bob')?.subscription_id as string;
    const before = await subscriptionOf(id);
    const mine = await fixtures(bed.ctx()).accessGroup();
    await bed.deps.db.insertInto('subscription_access_groups').values({ subscription_id: id, access_group_id: mine.id }).execute();
    const after = await counts();

    const changed = {
      ...bob,
      usedBytes: 7_000,
      lifetimeUsedBytes: 9_000,
      trafficLimitBytes: 80_000,
      inboundTags: ['Trojan TCP'],
      note: 'moved',
    };
    const second = await applyImport(bed.ctx(), batch([changed, user({ username: 'newcomer' })]), { sourceName: 'again' });
    expect(second.counts).toEqual({
      users_created: 1,
      users_updated: 1,
      access_groups_created: 0,
      inbound_profiles_created: 0,
      inbounds_created: 0,
    });
    expect(outcomeOf(second, 'bob')).toMatchObject({ action: 'update', subscription_id: id });
    expect(await counts()).toEqual({ ...after, clients: after.clients + 1, subscriptions: after.subscriptions + 1 });
    const sub = await subscriptionOf(id);
    expect(sub).toMatchObject({
      traffic_limit_bytes: 80_000,
      note: 'moved',
      vmess_uuid: bob.credentials.vmess?.uuid,
      vless_uuid: before.vless_uuid,
    });
    expect(Number(sub.used_bytes)).toBe(7_000);
    expect(sub.token_hash).toBe(before.token_hash);
    expect(await groupsOf(id)).toEqual(['again: Trojan TCP', mine.name].sort());

    const third = await applyImport(bed.ctx(), batch([changed, user({ username: 'newcomer' })]), { sourceName: 'again' });
    expect(third.counts).toEqual({
      users_created: 0,
      users_updated: 2,
      access_groups_created: 0,
      inbound_profiles_created: 0,
      inbounds_created: 0,
    });
    expect(await counts()).toEqual({ ...after, clients: after.clients + 1, subscriptions: after.subscriptions + 1 });
  });

  it('a dry run reports the same mapping and writes nothing', async () => {
    const before = await counts();
    const users = [user({ username: 'dry1' }), user({ username: 'dry2', renewal: 'year' })];
    const dry = await applyImport(bed.ctx(), batch(users), { sourceName: 'dry', dryRun: true });
    expect(dry.dry_run).toBe(true);
    expect(dry.counts).toEqual({
      users_created: 2,
      users_updated: 0,
      access_groups_created: 3,
      inbound_profiles_created: 3,
      inbounds_created: 0,
    });
    expect(dry.not_carried).toEqual([
      { what: 'user dry2: renewal', why: 'a yearly reset has no counterpart here: imported without resets' },
    ]);
    expect(await counts()).toEqual(before);
    expect(
      await bed.deps.db
        .selectFrom('audit_log')
        .select('id')
        .where('action', '=', 'import.applied')
        .where('details', '@>', JSON.stringify({ name: 'dry' }) as never)
        .execute(),
    ).toEqual([]);
    const real = await applyImport(bed.ctx(), batch(users), { sourceName: 'dry' });
    expect(real.users.map((u) => [u.username, u.client_email, u.status])).toEqual(
      dry.users.map((u) => [u.username, u.client_email, u.status]),
    );
  });

  it('reports what it cannot carry: a yearly reset, a second user of one name; an on-hold term waits for its first use', async () => {
    const report = await applyImport(
      bed.ctx(),
      batch([
        user({ username: 'yearly', renewal: 'year' }),
        user({ username: 'held', status: 'on_hold', expiresAt: null, onHold: { durationSeconds: 86_400, startsBy: null } }),
        user({ username: 'Twin' }),
        user({ username: 'twin' }),
      ]),
      { sourceName: 'odd' },
    );
    expect(report.not_carried).toEqual([
      { what: 'user yearly: renewal', why: 'a yearly reset has no counterpart here: imported without resets' },
      { what: 'user twin', why: 'a second user with the same name (names are case-insensitive at the source)' },
    ]);
    const held = await subscriptionOf(outcomeOf(report, 'held')?.subscription_id as string);
    expect(held).toMatchObject({
      expires_at: null,
      starts_on_first_use_seconds: 86_400,
      start_by: null,
      status: 'active',
      renewal: 'month',
    });
  });

  it('placeholder addresses stay unique: a taken one gets a number; a source email is kept when free', async () => {
    await fixtures(bed.ctx()).client({ email: 'carol@mail.import.invalid' });
    const report = await applyImport(bed.ctx(), batch([user({ username: 'carol' }), user({ username: 'dan', email: 'dan@example.com' })]), {
      sourceName: 'mail',
    });
    expect(outcomeOf(report, 'carol')?.client_email).toBe('carol-1@mail.import.invalid');
    expect(outcomeOf(report, 'dan')?.client_email).toBe('dan@example.com');
  });

  it('refuses a source name of another kind, or one that is not a name, and writes nothing', async () => {
    await applyImport(bed.ctx(), batch([user()]), { sourceName: 'kinds' });
    const before = await counts();
    expect((await refusal(applyImport(bed.ctx(), batch([user()], { source: '3x-ui' }), { sourceName: 'kinds' }))).type).toBe('validation');
    expect((await refusal(applyImport(bed.ctx(), batch([user()]), { sourceName: 'Not A Name!' }))).type).toBe('validation');
    expect(await counts()).toEqual(before);
  });
});
