import { engineOf, XRAY_CAPABILITIES } from '@svc/domain';
import { NodeConfig, Protocol } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import { CHAIN_METHOD, compiledUntilMs, compileNodeConfig } from './compile.ts';
import type { ModelInbound, ModelSubscription, NodeModel } from './model.ts';

const NOW = new Date('2026-11-21T12:00:00Z');

const inbound = (id: string, extra: Partial<ModelInbound> = {}): ModelInbound => ({
  id,
  tag: `tag-${id}`,
  port: 443,
  listen: null,
  chain_id: null,
  protocol: 'vless',
  stream: { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
  reality_private_key: null,
  sniffing: { enabled: true, dest_override: ['http', 'tls'], route_only: false },
  vless_flow: null,
  shadowsocks_method: null,
  shadowsocks_server_key: null,
  block_bittorrent: false,
  ...extra,
});

const sub = (id: string, inbound_ids: string[], extra: Partial<ModelSubscription> = {}): ModelSubscription => ({
  id,
  status: 'active',
  traffic_limit_bytes: null,
  expires_at: null,
  client_status: 'active',
  vless_uuid: `vless-${id}`,
  vmess_uuid: `vmess-${id}`,
  trojan_password: `trojan-${id}`,
  shadowsocks_password: Buffer.alloc(32, 7).toString('base64'),
  inbound_ids,
  ...extra,
});

const model = (m: Partial<NodeModel>): NodeModel => ({
  node_id: 'n0',
  revision: 1,
  now: NOW,
  engine: XRAY_CAPABILITIES,
  inbounds: [],
  subscriptions: [],
  chains: [],
  certificates: [],
  ...m,
});

describe('compileNodeConfig: users (issue 5 rule 1)', () => {
  it('a subscription is a user of an inbound iff it is granted it, serves now (stored active, not past expiry by the snapshot clock; a limit reached is stored as limited) and its client is active', () => {
    const cases: Array<[Partial<ModelSubscription>, boolean]> = [
      [{}, true],
      [{ status: 'disabled' }, false],
      [{ status: 'limited' }, false],
      [{ status: 'expired' }, false],
      [{ expires_at: new Date(NOW.getTime() - 1) }, false],
      [{ expires_at: new Date(NOW.getTime() + 60_000) }, true],
      [{ traffic_limit_bytes: 100 }, true],
      [{ traffic_limit_bytes: 100, status: 'limited' }, false],
      [{ status: 'limited', expires_at: new Date(NOW.getTime() + 60_000) }, false],
      [{ client_status: 'disabled' }, false],
      [{ client_status: 'pending' }, false],
    ];
    for (const [extra, present] of cases) {
      const c = compileNodeConfig(
        model({ inbounds: [inbound('a'), inbound('b', { port: 80 })], subscriptions: [sub('s1', ['a'], extra)] }),
      );
      expect(
        c.xray?.inbounds[0]?.users.map((u) => u.email),
        JSON.stringify(extra),
      ).toEqual(present ? ['s1@svc'] : []);
      expect(c.xray?.inbounds[1]?.users).toEqual([]);
    }
  });

  it('accounts follow the protocol: vless id + the profile flow, vmess id, trojan password, shadowsocks method + key', () => {
    const c = compileNodeConfig(
      model({
        inbounds: [
          inbound('v', { vless_flow: 'xtls-rprx-vision' }),
          inbound('m', { protocol: 'vmess', port: 2 }),
          inbound('t', { protocol: 'trojan', port: 3 }),
          inbound('s', {
            protocol: 'shadowsocks',
            port: 4,
            shadowsocks_method: '2022-blake3-aes-128-gcm',
            shadowsocks_server_key: Buffer.alloc(16, 1).toString('base64'),
          }),
        ],
        subscriptions: [sub('s1', ['v', 'm', 't', 's'])],
      }),
    );
    const users = Object.fromEntries((c.xray?.inbounds ?? []).map((i) => [i.tag, i.users[0]]));
    expect(users['tag-v']).toEqual({ email: 's1@svc', vless: { id: 'vless-s1', flow: 'xtls-rprx-vision' } });
    expect(users['tag-m']).toEqual({ email: 's1@svc', vmess: { id: 'vmess-s1' } });
    expect(users['tag-t']).toEqual({ email: 's1@svc', trojan: { password: 'trojan-s1' } });
    expect(users['tag-s']?.shadowsocks?.method).toBe('2022-blake3-aes-128-gcm');
    // Xray's multi-user 2022 layout: <server key>:<user key>, both 16 bytes for AES-128.
    const [serverKey, userKey] = (users['tag-s']?.shadowsocks?.password ?? '').split(':');
    expect(serverKey).toBe(Buffer.alloc(16, 1).toString('base64'));
    expect(Buffer.from(userKey ?? '', 'base64')).toHaveLength(16);
  });
});

describe('compileNodeConfig: for the node’s engine (engine-capabilities.ts)', () => {
  const QUIC = { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false };
  const v2ray4 = engineOf('4.34.0').capabilities;

  it('one profile asking for quic: an Xray node gets it, a V2Ray 4 node gets http and tls', () => {
    const m = { inbounds: [inbound('a', { sniffing: QUIC })], subscriptions: [sub('s1', ['a'])] };
    const sniffOf = (c: NodeConfig) => c.xray?.inbounds[0]?.sniffing;
    expect(sniffOf(compileNodeConfig(model({ ...m, engine: XRAY_CAPABILITIES })))?.destOverride).toEqual(['http', 'tls', 'quic']);
    expect(sniffOf(compileNodeConfig(model({ ...m, engine: v2ray4 })))).toEqual({
      enabled: true,
      destOverride: ['http', 'tls'],
      routeOnly: false,
    });
  });

  it('a Shadowsocks inbound without users is left out on V2Ray with its routing, kept on Xray; it comes back with a user', () => {
    const m = {
      inbounds: [
        inbound('v'),
        inbound('s', { protocol: 'shadowsocks', port: 2, shadowsocks_method: 'aes-128-gcm', block_bittorrent: true }),
      ],
      subscriptions: [sub('s1', ['v'])],
    };
    const tags = (c: NodeConfig) => [c.xray?.inbounds.map((i) => i.tag), c.xray?.routingRules.map((r) => r.inboundTag)];
    expect(tags(compileNodeConfig(model({ ...m, engine: v2ray4 })))).toEqual([['tag-v'], ['tag-v']]);
    expect(tags(compileNodeConfig(model({ ...m, engine: XRAY_CAPABILITIES })))).toEqual([
      ['tag-s', 'tag-v'],
      ['tag-s', 'tag-s', 'tag-v'],
    ]);
    const served = compileNodeConfig(model({ ...m, subscriptions: [sub('s1', ['v', 's'])], engine: v2ray4 }));
    expect(served.xray?.inbounds.map((i) => [i.tag, i.users.length])).toEqual([
      ['tag-s', 1],
      ['tag-v', 1],
    ]);
  });
});

describe('compileNodeConfig: chains and routing order', () => {
  const chain = {
    id: 'chn_x',
    hops: [
      { position: 0, node_id: 'n0', address: 'a.example', port: 7000, secret: 's0' },
      { position: 1, node_id: 'n1', address: 'b.example', port: 7001, secret: 's1' },
      { position: 2, node_id: 'n2', address: 'c.example', port: 7002, secret: 's2' },
    ],
  };
  const entry = inbound('e', { chain_id: 'chn_x', block_bittorrent: true });

  it('first hop: the entry inbound goes to a link to hop 1 (its address, chain-in port and secret); bittorrent to block first', () => {
    const c = compileNodeConfig(model({ inbounds: [entry, inbound('plain', { port: 80 })], chains: [chain] }));
    expect(c.xray?.outbounds.map((o) => o.tag)).toEqual(['direct', 'block', 'chain-out-chn_x']);
    expect(c.xray?.outbounds[2]).toMatchObject({
      protocol: Protocol.SHADOWSOCKS,
      address: 'b.example',
      port: 7001,
      shadowsocks: { method: CHAIN_METHOD, password: 's1' },
    });
    expect(c.xray?.routingRules).toEqual([
      { inboundTag: 'tag-e', outboundTag: 'block', protocols: ['bittorrent'] },
      { inboundTag: 'tag-e', outboundTag: 'chain-out-chn_x', protocols: [] },
      { inboundTag: 'tag-plain', outboundTag: 'direct', protocols: [] },
    ]);
    expect(c.xray?.inbounds.map((i) => i.tag)).not.toContain('chain-in-chn_x');
  });

  it('middle hop: chain-in with the single user chain:<id>:1 routed to the link to the last hop', () => {
    const c = compileNodeConfig(model({ node_id: 'n1', chains: [chain] }));
    const chainIn = c.xray?.inbounds.find((i) => i.tag === 'chain-in-chn_x');
    expect(chainIn).toMatchObject({ port: 7001, protocol: Protocol.SHADOWSOCKS });
    expect(chainIn?.users).toEqual([{ email: 'chain:chn_x:1', shadowsocks: { method: CHAIN_METHOD, password: 's1' } }]);
    expect(c.xray?.outbounds.find((o) => o.tag === 'chain-out-chn_x')).toMatchObject({ address: 'c.example', port: 7002 });
    expect(c.xray?.routingRules).toEqual([{ inboundTag: 'chain-in-chn_x', outboundTag: 'chain-out-chn_x', protocols: [] }]);
  });

  it('last hop: chain-in exits through freedom (direct); no link onwards', () => {
    const c = compileNodeConfig(model({ node_id: 'n2', chains: [chain] }));
    expect(c.xray?.routingRules).toEqual([{ inboundTag: 'chain-in-chn_x', outboundTag: 'direct', protocols: [] }]);
    expect(c.xray?.outbounds.map((o) => o.tag)).toEqual(['direct', 'block']);
  });
});

describe('compileNodeConfig: deterministic', () => {
  it('the same model in any input order encodes to the same bytes', () => {
    const inbounds = [inbound('a'), inbound('b', { port: 2, protocol: 'trojan' }), inbound('c', { port: 3, protocol: 'vmess' })];
    const subs = Array.from({ length: 50 }, (_, i) =>
      sub(
        `s${String(i).padStart(3, '0')}`,
        ['a', 'b', 'c'].filter((_, k) => (i + k) % 2 === 0),
      ),
    );
    const one = NodeConfig.encode(compileNodeConfig(model({ inbounds, subscriptions: subs }))).finish();
    const shuffled = NodeConfig.encode(
      compileNodeConfig(model({ inbounds: [...inbounds].reverse(), subscriptions: [...subs].sort(() => Math.random() - 0.5) })),
    ).finish();
    expect(Buffer.from(shuffled).equals(Buffer.from(one))).toBe(true);
  });
});

describe('compileNodeConfig: user limits (issue 36) of members kept between snapshots', () => {
  it('a member object compiled again gets its entry as before, and a new slice (or none) as the slices now say, never the one it was first compiled with', () => {
    const s = sub('s1', ['a'], { traffic_limit_bytes: 10_000, expires_at: new Date(NOW.getTime() + 86_400_000), upload_bps: 1_000 });
    const limitsWith = (slices: NodeModel['slices']) =>
      compileNodeConfig(model({ inbounds: [inbound('a')], subscriptions: [s], slices })).userLimits;
    const first = limitsWith(new Map([['s1', { slice_id: '7', slice_bytes: '2500' }]]));
    expect(first).toEqual([
      {
        subscriptionId: 's1',
        deviceLimit: 0,
        uploadBps: 1_000n,
        downloadBps: 0n,
        notAfterMs: BigInt(NOW.getTime() + 86_400_000),
        sliceId: 7n,
        sliceBytes: 2_500n,
      },
    ]);
    expect(limitsWith(new Map([['s1', { slice_id: '7', slice_bytes: '2500' }]]))).toEqual(first);
    expect(limitsWith(new Map([['s1', { slice_id: '8', slice_bytes: '2500' }]]))[0]).toMatchObject({ sliceId: 8n, sliceBytes: 2_500n });
    expect(limitsWith(new Map([['s1', { slice_id: '8', slice_bytes: '900' }]]))[0]).toMatchObject({ sliceId: 8n, sliceBytes: 900n });
    expect(limitsWith(new Map())[0]).toMatchObject({ sliceId: 0n, sliceBytes: 0n, uploadBps: 1_000n });
    // A changed member is a new object (the member cache reads its bucket again): its own entry.
    const changed = { ...s, upload_bps: null, device_limit: 2 };
    expect(compileNodeConfig(model({ inbounds: [inbound('a')], subscriptions: [changed] })).userLimits[0]).toMatchObject({
      deviceLimit: 2,
      uploadBps: 0n,
    });
  });
});

describe('compiledUntilMs: how long a compiled revision stays what a later compile of it gives', () => {
  const bytesAt = (m: NodeModel, at: number) => Buffer.from(NodeConfig.encode(compileNodeConfig({ ...m, now: new Date(at) })).finish());
  it('the same bytes for every clock reading before it, different at it (the earliest expiry ahead of a member it serves)', () => {
    const t = NOW.getTime();
    const m = model({
      inbounds: [inbound('a')],
      subscriptions: [
        sub('s1', ['a'], { expires_at: new Date(t + 90_000) }),
        sub('s2', ['a'], { expires_at: new Date(t + 30_000) }),
        sub('s3', ['a'], { status: 'limited', expires_at: new Date(t + 10_000) }),
        sub('s4', ['a'], { expires_at: new Date(t - 5_000) }),
        sub('s5', ['a'], { status: 'disabled', expires_at: new Date(t + 1_000) }),
        sub('s6', ['a']),
        sub('s7', ['a'], { client_status: 'disabled', expires_at: new Date(t + 2_000) }),
      ],
    });
    // s3 (limited), s5 (disabled) and s7 (its client disabled) serve nobody before or after their expiry: the compile moves at s2's.
    expect(compiledUntilMs(m)).toBe(t + 30_000);
    const first = bytesAt(m, t);
    for (const at of [t + 1, t + 9_999, t + 29_999]) expect(bytesAt(m, at).equals(first)).toBe(true);
    expect(bytesAt(m, t + 30_000).equals(first)).toBe(false);
    expect(compiledUntilMs({ ...m, now: new Date(t + 30_000) })).toBe(t + 90_000);
  });
  it('Infinity when no member has an expiry ahead', () => {
    expect(
      compiledUntilMs(model({ inbounds: [inbound('a')], subscriptions: [sub('s1', ['a']), sub('s2', ['a'], { status: 'expired' })] })),
    ).toBe(Number.POSITIVE_INFINITY);
  });
});
