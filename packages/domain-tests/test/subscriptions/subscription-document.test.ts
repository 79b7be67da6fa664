import {
  ingestUsageReport,
  parseInput,
  readSubscriptionDocument,
  readSubscriptionDocuments,
  resetEndedPeriods,
  rotateSubscriptionCredentials,
  shadowsocksPassword,
  UpdateNodeInput,
  UpdateSubscriptionInput,
  updateNode,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, uniqueName } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What GET /sub/{token} renders comes from readSubscriptionDocument; the fleet is made through
// the fleet's use cases (see customers-support.ts for why not its fixtures yet).

const BASE = 'https://panel.example.com';
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: BASE } });
});
afterAll(() => bed.close());

const linkToken = (link: string) => link.slice(`${BASE}/sub/`.length);

describe('readSubscriptionDocument: the servers a link token names', () => {
  let fleet: {
    sub: { id: string; link: string };
    berlin: { id: string };
    reality: { id: string; stream: { reality?: { public_key: string; short_ids: string[] } } };
    ss: { id: string };
  };

  beforeAll(async () => {
    const ctx = bed.ctx();
    const make = fixtures(ctx);
    const amsterdam = await make.node({ name: 'Amsterdam', address: 'ams.example.net' });
    const berlin = await make.node({ name: 'Berlin', address: '203.0.113.7' });
    const closed = await make.node({ name: 'Closed', address: 'closed.example.net' });
    const reality = await make.profile({
      name: 'vless-reality',
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    });
    const ws = await make.profile({
      name: 'trojan-ws',
      protocol: 'trojan',
      stream: { network: 'ws', security: 'none', ws: { path: '/tj' } },
    });
    const ss = await make.profile({
      name: 'ss-2022',
      protocol: 'shadowsocks',
      shadowsocks_method: '2022-blake3-aes-128-gcm',
      stream: { network: 'tcp', security: 'none' },
    });
    const inReality = await make.inbound({ node_id: berlin.id, profile_id: reality.id, port: 443 });
    const inWs = await make.inbound({ node_id: amsterdam.id, profile_id: ws.id, port: 8080, host: 'cdn.example.org' });
    const inSs = await make.inbound({ node_id: berlin.id, profile_id: ss.id, port: 8388 });
    const inClosed = await make.inbound({ node_id: closed.id, profile_id: ws.id, port: 8080 });
    const g1 = await make.accessGroup({ name: 'doc-g1', inbound_ids: [inReality.id, inWs.id, inClosed.id] });
    const g2 = await make.accessGroup({ name: 'doc-g2', inbound_ids: [inWs.id, inSs.id] });
    await updateNode(ctx, closed.id, parseInput(UpdateNodeInput, { admin_status: 'disabled' }));
    const sub = await make.subscription({ access_group_ids: [g1.id, g2.id], traffic_limit_bytes: 10_000_000 });
    fleet = { sub, berlin, reality, ss };
  });

  it('lists every granted inbound once, on enabled nodes, by node name then tag, each with its address and the subscription credentials', async () => {
    const doc = await readSubscriptionDocument(bed.deps, linkToken(fleet.sub.link));
    const row = await bed.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', fleet.sub.id).executeTakeFirstOrThrow();
    const ssProfile = await bed.deps.db.selectFrom('inbound_profiles').selectAll().where('id', '=', fleet.ss.id).executeTakeFirstOrThrow();
    expect(doc?.status).toBe('active');
    expect(doc?.traffic_limit_bytes).toBe(10_000_000);
    expect(doc?.servers.map((x) => [x.name, x.protocol, x.address, x.port])).toEqual([
      ['Amsterdam · trojan-ws', 'trojan', 'cdn.example.org', 8080],
      ['Berlin · ss-2022', 'shadowsocks', '203.0.113.7', 8388],
      ['Berlin · vless-reality', 'vless', '203.0.113.7', 443],
    ]);
    const [trojan, shadowsocks, vless] = doc?.servers ?? [];
    expect(trojan).toMatchObject({
      password: row.trojan_password,
      stream: { network: 'ws', security: 'none', ws: { path: '/tj', host: 'cdn.example.org' } },
    });
    expect(shadowsocks).toMatchObject({
      method: '2022-blake3-aes-128-gcm',
      password: shadowsocksPassword('2022-blake3-aes-128-gcm', ssProfile.shadowsocks_server_key, row.shadowsocks_password),
    });
    expect(shadowsocks?.password).toMatch(/^[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(vless).toMatchObject({
      uuid: row.vless_uuid,
      flow: 'xtls-rprx-vision',
      stream: {
        network: 'tcp',
        security: 'reality',
        reality: {
          sni: 'www.example.com',
          public_key: fleet.reality.stream.reality?.public_key,
          short_id: fleet.reality.stream.reality?.short_ids[0] ?? '',
          fingerprint: 'chrome',
        },
      },
    });
  });

  it("counts this period's traffic by direction, as the usage reports credit it; a new period starts from zero", async () => {
    await ingestUsageReport(bed.deps, fleet.berlin.id, {
      report_id: 1n,
      entries: [{ subscription_id: fleet.sub.id, uplink_bytes: 100n, downlink_bytes: 2000n }],
    });
    await ingestUsageReport(bed.deps, fleet.berlin.id, {
      report_id: 2n,
      entries: [{ subscription_id: fleet.sub.id, uplink_bytes: 5n, downlink_bytes: 50n }],
    });
    const doc = await readSubscriptionDocument(bed.deps, linkToken(fleet.sub.link));
    expect([doc?.upload_bytes, doc?.download_bytes]).toEqual([105, 2050]);
    // A new renewal period: the counters start again.
    await updateSubscription(bed.ctx(), fleet.sub.id, parseInput(UpdateSubscriptionInput, { renewal: 'day' }));
    bed.clock.advance(2 * 86_400_000);
    await resetEndedPeriods(bed.system());
    const after = await readSubscriptionDocument(bed.deps, linkToken(fleet.sub.link));
    expect([after?.upload_bytes, after?.download_bytes]).toEqual([0, 0]);
  });

  it('a disabled subscription shows its status and no servers; a rotated, unknown or malformed token names nothing', async () => {
    const sub = await fixtures(bed.ctx()).subscription({ status: 'disabled' });
    const disabled = await readSubscriptionDocument(bed.deps, linkToken(sub.link));
    expect(disabled?.status).toBe('disabled');
    expect(disabled?.servers).toEqual([]);

    const rotated = await rotateSubscriptionCredentials(bed.ctx(), sub.id);
    expect(await readSubscriptionDocument(bed.deps, linkToken(sub.link))).toBeNull();
    expect((await readSubscriptionDocument(bed.deps, linkToken(rotated.link)))?.subscription_id).toBe(sub.id);
    expect(await readSubscriptionDocument(bed.deps, 'A'.repeat(43))).toBeNull();
    expect(await readSubscriptionDocument(bed.deps, 'short')).toBeNull();
    expect(await readSubscriptionDocument(bed.deps, `${'A'.repeat(42)}/`)).toBeNull();
  });
});

describe('readSubscriptionDocuments: several tokens in one statement', () => {
  it('maps each token to its own document, unknown and malformed ones to null, as one at a time would', async () => {
    const client = await fixtures(bed.ctx()).client({ email: `${uniqueName('doc-many')}@example.com` });
    const subs = [];
    for (let i = 0; i < 3; i++) subs.push(await fixtures(bed.ctx()).subscription({ client_id: client.id }));
    const tokens = [...subs.map((x) => linkToken(x.link)), 'Z'.repeat(43), 'bad'];
    const docs = await readSubscriptionDocuments(bed.deps, [...tokens, tokens[0] as string]);
    expect([...docs.keys()]).toEqual(tokens);
    for (const [i, sub] of subs.entries()) {
      expect(docs.get(tokens[i] as string)?.subscription_id).toBe(sub.id);
      expect(docs.get(tokens[i] as string)).toEqual(await readSubscriptionDocument(bed.deps, tokens[i] as string));
    }
    expect(docs.get('Z'.repeat(43))).toBeNull();
    expect(docs.get('bad')).toBeNull();
  });
});
