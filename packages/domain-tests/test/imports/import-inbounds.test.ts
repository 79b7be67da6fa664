import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { applyImport, type ImportBatch, type ImportedInbound, type ImportedUser } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Issue 34 item 1, the inbounds: each source inbound becomes an inbound profile as the source
// runs it (transport, security, the REALITY key and short ids, a Shadowsocks 2022 server key:
// what the links customers hold carry), bound at its port on the nodes the operator names and
// put in its access group; what has no counterpart here is reported, never half made.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed?.close());

const realityKey = () => generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' }).d as string;

let n = 0;
const user = (inboundTags: string[], over: Partial<ImportedUser> = {}): ImportedUser => {
  const username = `in${++n}`;
  return {
    key: username,
    username,
    linkKey: null,
    email: null,
    status: 'active',
    usedBytes: 0,
    lifetimeUsedBytes: 0,
    trafficLimitBytes: null,
    renewal: 'no_reset',
    expiresAt: null,
    onHold: null,
    credentials: {
      vless: { uuid: randomUUID(), flow: 'xtls-rprx-vision' },
      vmess: { uuid: randomUUID() },
      trojan: { password: `t-${username}` },
      shadowsocks: { password: randomBytes(16).toString('base64'), method: '2022-blake3-aes-128-gcm' },
    },
    inboundTags,
    note: null,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    linksRevokedAt: null,
    ...over,
  };
};
const inbound = (over: Partial<ImportedInbound> & Pick<ImportedInbound, 'tag' | 'protocol' | 'port'>): ImportedInbound => ({
  listen: null,
  streamSettings: null,
  shadowsocksMethod: null,
  shadowsocksServerKey: null,
  sniffing: null,
  ...over,
});
const batch = (inbounds: ImportedInbound[], users: ImportedUser[]): ImportBatch => ({
  source: '3x-ui',
  sourceVersion: null,
  linkSecret: null,
  users,
  inbounds,
  notCarried: [],
});
const profileOf = async (source: string, tag: string) => {
  const row = await bed.deps.db
    .selectFrom('imported_inbounds as ii')
    .innerJoin('import_sources as s', 's.id', 'ii.source_id')
    .leftJoin('inbound_profiles as p', 'p.id', 'ii.profile_id')
    .select(['p.id', 'p.name', 'p.protocol', 'p.stream', 'p.sniffing', 'p.vless_flow', 'p.shadowsocks_method', 'p.shadowsocks_server_key'])
    .select('p.reality_private_key_enc')
    .where('s.name', '=', source)
    .where('ii.tag', '=', tag)
    .executeTakeFirstOrThrow();
  return row;
};
const tally = async () => ({
  profiles: (await bed.deps.db.selectFrom('inbound_profiles').select('id').execute()).length,
  inbounds: (await bed.deps.db.selectFrom('inbounds').select('id').execute()).length,
  groups: (await bed.deps.db.selectFrom('access_groups').select('id').execute()).length,
  subscriptions: (await bed.deps.db.selectFrom('subscriptions').select('id').execute()).length,
});

describe('applyImport: source inbounds', () => {
  it('makes each source inbound a profile as the source runs it: REALITY key and short ids, ws path and host, gRPC, TLS on a named certificate, a 2022 server key, vision flow, sniffing', async () => {
    const f = fixtures(bed.ctx());
    const cert = await f.certificate();
    const privateKey = realityKey();
    const serverKey = randomBytes(16).toString('base64');
    const inbounds = [
      inbound({
        tag: 'reality',
        protocol: 'vless',
        port: 443,
        streamSettings: {
          network: 'tcp',
          security: 'reality',
          realitySettings: {
            dest: 'www.example.com:443',
            serverNames: ['www.example.com', 'example.com'],
            privateKey,
            shortIds: ['', 'ab12cd34'],
            settings: { fingerprint: 'firefox' },
          },
        },
        sniffing: { enabled: true, destOverride: ['http', 'tls', 'quic'], routeOnly: true },
      }),
      inbound({
        tag: 'vmess-ws',
        protocol: 'vmess',
        port: 8080,
        streamSettings: { network: 'ws', security: 'none', wsSettings: { path: '/vm', headers: { Host: 'cdn.example.com' } } },
      }),
      inbound({
        tag: 'trojan-grpc',
        protocol: 'trojan',
        port: 2083,
        streamSettings: {
          network: 'grpc',
          security: 'tls',
          grpcSettings: { serviceName: 'tg', multiMode: true },
          tlsSettings: { serverName: 'example.com', alpn: ['h2', 'http/1.1'], minVersion: '1.3' },
        },
      }),
      inbound({
        tag: 'ss22',
        protocol: 'shadowsocks',
        port: 8388,
        shadowsocksMethod: '2022-blake3-aes-128-gcm',
        shadowsocksServerKey: serverKey,
      }),
    ];
    const report = await applyImport(bed.ctx(), batch(inbounds, [user(['reality', 'vmess-ws', 'trojan-grpc', 'ss22'])]), {
      sourceName: 'profiles',
      tlsCertificateId: cert.id,
    });
    expect(report.not_carried).toEqual([]);
    expect(report.counts).toMatchObject({ inbound_profiles_created: 4, access_groups_created: 4, inbounds_created: 0 });
    expect(report.inbounds.map((i) => [i.tag, i.profile])).toEqual([
      ['reality', 'profiles: reality'],
      ['vmess-ws', 'profiles: vmess-ws'],
      ['trojan-grpc', 'profiles: trojan-grpc'],
      ['ss22', 'profiles: ss22'],
    ]);

    const reality = await profileOf('profiles', 'reality');
    expect(reality).toMatchObject({ protocol: 'vless', vless_flow: 'xtls-rprx-vision' });
    expect(bed.deps.secrets.open(reality.reality_private_key_enc as string)).toBe(privateKey);
    expect(reality.stream).toMatchObject({
      network: 'tcp',
      security: 'reality',
      reality: {
        dest: 'www.example.com:443',
        server_names: ['www.example.com', 'example.com'],
        short_ids: ['', 'ab12cd34'],
        fingerprint: 'firefox',
      },
    });
    expect(reality.sniffing).toEqual({
      enabled: true,
      dest_override: ['http', 'tls', 'quic'],
      route_only: true,
    });

    expect((await profileOf('profiles', 'vmess-ws')).stream).toMatchObject({
      network: 'ws',
      security: 'none',
      ws: { path: '/vm', headers: { Host: 'cdn.example.com' } },
    });
    expect((await profileOf('profiles', 'trojan-grpc')).stream).toMatchObject({
      network: 'grpc',
      security: 'tls',
      grpc: { service_name: 'tg', multi_mode: true },
      tls: { server_names: ['example.com'], alpn: 'h2,http/1.1', min_version: '1.3', certificate_id: cert.id },
    });
    expect(await profileOf('profiles', 'ss22')).toMatchObject({
      shadowsocks_method: '2022-blake3-aes-128-gcm',
      shadowsocks_server_key: serverKey,
    });
  });

  it('reports what has no counterpart and makes its access group only: mKCP, TCP header obfuscation, TLS with no certificate named, an unknown Shadowsocks method', async () => {
    const inbounds = [
      inbound({ tag: 'kcp', protocol: 'vmess', port: 1001, streamSettings: { network: 'kcp' } }),
      inbound({
        tag: 'http-header',
        protocol: 'vmess',
        port: 1002,
        streamSettings: { network: 'tcp', tcpSettings: { header: { type: 'http' } } },
      }),
      inbound({ tag: 'tls', protocol: 'trojan', port: 1003, streamSettings: { network: 'tcp', security: 'tls', tlsSettings: {} } }),
      inbound({ tag: 'ss-old', protocol: 'shadowsocks', port: 1004, shadowsocksMethod: 'rc4-md5' }),
    ];
    const report = await applyImport(bed.ctx(), batch(inbounds, [user(['kcp', 'tls'])]), { sourceName: 'uncarried' });
    expect(report.counts).toMatchObject({ inbound_profiles_created: 0, access_groups_created: 4 });
    expect(report.inbounds.every((i) => i.profile === null)).toBe(true);
    const why = Object.fromEntries(report.not_carried.map((r) => [r.what, r.why]));
    expect(why['inbound kcp']).toMatch(/transport kcp/);
    expect(why['inbound http-header']).toMatch(/http header/);
    expect(why['inbound tls']).toMatch(/certificate/);
    expect(why['inbound ss-old']).toMatch(/Shadowsocks method/);
    // The user still is in the groups of their inbounds: an operator's inbound put there serves them.
    expect(report.users[0]?.access_groups).toEqual(['kcp', 'tls']);
  });

  it('binds each profile on the nodes the operator names, at the source port, in its group; a second import binds nothing twice', async () => {
    const f = fixtures(bed.ctx());
    const [a, b] = [await f.node(), await f.node()];
    const inbounds = [
      inbound({ tag: 'v', protocol: 'vless', port: 31443 }),
      inbound({ tag: 't', protocol: 'trojan', port: 31444, listen: '0.0.0.0' }),
    ];
    const source = batch(inbounds, [user(['v', 't'])]);
    const first = await applyImport(bed.ctx(), source, { sourceName: 'bound', nodes: [a.name, b.id] });
    expect(first.counts).toMatchObject({ inbound_profiles_created: 2, inbounds_created: 4 });
    expect(first.inbounds.map((i) => [i.tag, i.nodes])).toEqual([
      ['v', [a.name, b.name]],
      ['t', [a.name, b.name]],
    ]);
    const bound = await bed.deps.db
      .selectFrom('inbounds as i')
      .innerJoin('access_group_inbounds as gi', 'gi.inbound_id', 'i.id')
      .innerJoin('imported_inbounds as ii', (j) =>
        j.onRef('ii.access_group_id', '=', 'gi.access_group_id').onRef('ii.profile_id', '=', 'i.profile_id'),
      )
      .select(['i.node_id', 'i.port', 'i.listen', 'ii.tag'])
      .where('i.node_id', 'in', [a.id, b.id])
      .orderBy('ii.tag')
      .orderBy('i.node_id')
      .execute();
    expect(bound.map((r) => [r.tag, r.node_id, r.port, r.listen])).toEqual(
      [
        ['t', a.id, 31444, '0.0.0.0'],
        ['t', b.id, 31444, '0.0.0.0'],
        ['v', a.id, 31443, null],
        ['v', b.id, 31443, null],
      ].sort((x, y) => `${x[0]}${x[1]}`.localeCompare(`${y[0]}${y[1]}`)),
    );
    const nodesAfter = await bed.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', [a.id, b.id]).execute();
    expect(nodesAfter.every((r) => Number(r.desired_revision) > 1)).toBe(true);

    const before = await tally();
    const again = await applyImport(bed.ctx(), source, { sourceName: 'bound', nodes: [a.name, b.name] });
    expect(again.counts).toMatchObject({ users_created: 0, inbound_profiles_created: 0, inbounds_created: 0, access_groups_created: 0 });
    expect(again.inbounds.map((i) => i.nodes)).toEqual([
      [a.name, b.name],
      [a.name, b.name],
    ]);
    expect(await tally()).toEqual(before);
  });

  it('reports a port the node already uses and takes nothing from it', async () => {
    const f = fixtures(bed.ctx());
    const node = await f.node();
    const theirs = await f.inbound({ node_id: node.id, port: 32443 });
    const report = await applyImport(bed.ctx(), batch([inbound({ tag: 'clash', protocol: 'vless', port: 32443 })], [user(['clash'])]), {
      sourceName: 'ports',
      nodes: [node.id],
    });
    expect(report.counts.inbounds_created).toBe(0);
    expect(report.not_carried).toEqual([
      { what: `inbound clash on node ${node.name}`, why: 'port 32443 there is already used by another inbound' },
    ]);
    const onNode = await bed.deps.db.selectFrom('inbounds').select(['id', 'profile_id']).where('node_id', '=', node.id).execute();
    expect(onNode).toEqual([{ id: theirs.id, profile_id: theirs.profile_id }]);
  });

  it('refuses an unknown node or certificate, and writes nothing', async () => {
    const before = await tally();
    const source = batch([inbound({ tag: 'x', protocol: 'vless', port: 33443 })], [user(['x'])]);
    const node = await refusal(applyImport(bed.ctx(), source, { sourceName: 'refused', nodes: ['no-such-node'] }));
    expect(node).toMatchObject({ type: 'validation', errors: { nodes: 'no such node: no-such-node' } });
    const cert = await refusal(applyImport(bed.ctx(), source, { sourceName: 'refused', tlsCertificateId: 'crt_none' }));
    expect(cert).toMatchObject({ type: 'validation', errors: { tls_certificate: 'no such certificate' } });
    expect(await tally()).toEqual(before);
  });

  it('a dry run with nodes reports the profiles and inbounds it would make, and writes none of them', async () => {
    const node = await fixtures(bed.ctx()).node();
    const before = await tally();
    const report = await applyImport(bed.ctx(), batch([inbound({ tag: 'dry', protocol: 'vmess', port: 34443 })], [user(['dry'])]), {
      sourceName: 'dry',
      nodes: [node.id],
      dryRun: true,
    });
    expect(report).toMatchObject({ dry_run: true, counts: { inbound_profiles_created: 1, inbounds_created: 1 } });
    expect(report.inbounds).toEqual([
      { tag: 'dry', protocol: 'vmess', port: 34443, access_group: 'dry: dry', profile: 'dry: dry', nodes: [node.name] },
    ]);
    expect(await tally()).toEqual(before);
  });
});
