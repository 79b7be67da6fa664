import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeConfig, Protocol } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import {
  chainNodes,
  goldenCertificatePaths,
  inbound,
  nodeConfig,
  realityVisionNode,
  SS16,
  SS32,
  shadowsocksNode,
  ssUser,
  tls,
  vlessUser,
  xrayTransportsNode,
} from '../test/fixtures.ts';
import { type RenderOptions, renderXrayConfig, XrayConfigError, type XrayJson } from './index.ts';

/**
 * Golden files pin the Xray-only parts (the shared subset is checked by v2ray in
 * v2ray.test.ts): NodeConfig fixture -> Xray JSON, compared with test/golden/<name>.json exactly
 * (every key, value and key order) except for whitespace, which is the repository formatter's
 * (biome). `UPDATE_GOLDEN=1` rewrites the files and formats them; review the diff before committing.
 */
const dir = join(import.meta.dirname, '..', 'test', 'golden');
const biome = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'biome');
const opts: RenderOptions = { certificatePaths: goldenCertificatePaths };

function golden(name: string, json: XrayJson) {
  const file = join(dir, `${name}.json`);
  if (process.env.UPDATE_GOLDEN) {
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
    spawnSync(biome, ['format', '--write', file], { stdio: 'ignore' });
  }
  expect(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(JSON.stringify(json, null, 2)).toBe(JSON.stringify(JSON.parse(readFileSync(file, 'utf8')), null, 2));
}

describe('golden files (Xray-only parts)', () => {
  it('VLESS + REALITY over TCP with the xtls-rprx-vision flow', () => {
    golden('reality-vision', renderXrayConfig(realityVisionNode(), opts));
  });

  it('XHTTP (REALITY and TLS), HTTPUpgrade, gRPC (TLS and REALITY), WebSocket headers sorted, listen addresses', () => {
    golden('xray-transports', renderXrayConfig(xrayTransportsNode(), opts));
  });

  it('Shadowsocks: classic AEAD multi-user, 2022 multi-user with a server key, 2022 single user, no users', () => {
    golden('shadowsocks', renderXrayConfig(shadowsocksNode(), opts));
  });

  it.each(['entry', 'middle', 'exit', 'otherHops'] as const)('chain outbounds: %s', (hop) => {
    golden(`chain-${hop}`, renderXrayConfig(chainNodes()[hop], opts));
  });

  it('the stats API section when apiPort is given (loglevel too)', () => {
    golden('stats-api', renderXrayConfig(chainNodes().entry, { ...opts, apiPort: 10085, logLevel: 'info' }));
  });
});

describe('layout details', () => {
  it('certificatePaths is asked for each TLS certificate and its answer is used as is', () => {
    const asked: string[] = [];
    const json = renderXrayConfig(chainNodes().entry, {
      certificatePaths: (id) => {
        asked.push(id);
        return { certFile: `/c/${id}.crt`, keyFile: `/c/${id}.key` };
      },
    });
    expect(asked).toEqual(['crt_edge']);
    expect((json.inbounds[0]?.streamSettings as any).tlsSettings.certificates).toEqual([
      { certificateFile: '/c/crt_edge.crt', keyFile: '/c/crt_edge.key' },
    ]);
  });

  it('without apiPort there is no api, stats or policy section and no api inbound or rule', () => {
    const json = renderXrayConfig(chainNodes().entry, opts);
    expect(Object.keys(json)).toEqual(['log', 'inbounds', 'outbounds', 'routing']);
    expect(json.log).toEqual({ loglevel: 'warning' });
    expect(json.inbounds.map((i) => i.tag)).toEqual(['vless-443']);
  });

  it('with apiPort the api inbound, rule and sections come first', () => {
    const json = renderXrayConfig(chainNodes().entry, { ...opts, apiPort: 10085 });
    expect(Object.keys(json)).toEqual(['log', 'api', 'stats', 'policy', 'inbounds', 'outbounds', 'routing']);
    expect(json.inbounds[0]).toEqual({
      tag: 'api',
      listen: '127.0.0.1',
      port: 10085,
      protocol: 'dokodemo-door',
      settings: { address: '127.0.0.1' },
    });
    expect((json.routing.rules as any[])[0]).toEqual({ type: 'field', inboundTag: ['api'], outboundTag: 'api' });
  });

  it('renders every compiler golden NodeConfig (packages/desired-state/test/golden) without error', () => {
    const compilerGolden = join(import.meta.dirname, '..', '..', 'desired-state', 'test', 'golden');
    const files = existsSync(compilerGolden) ? readdirSync(compilerGolden).filter((f) => f.endsWith('.json')) : [];
    for (const f of files) {
      const config = NodeConfig.fromJSON(JSON.parse(readFileSync(join(compilerGolden, f), 'utf8')));
      const json = renderXrayConfig(config, { ...opts, apiPort: 10085 });
      expect(json.inbounds.length, f).toBeGreaterThan(0);
    }
  });
});

describe('determinism', () => {
  const all = (): NodeConfig[] => [realityVisionNode(), xrayTransportsNode(), shadowsocksNode(), ...Object.values(chainNodes())];

  it('the same NodeConfig renders byte-identical JSON every time', () => {
    for (const config of all()) {
      const first = JSON.stringify(renderXrayConfig(config, { ...opts, apiPort: 10085 }));
      for (let k = 0; k < 5; k++) expect(JSON.stringify(renderXrayConfig(config, { ...opts, apiPort: 10085 }))).toBe(first);
    }
  });

  it('a NodeConfig that went over the wire (encode, decode) renders the same bytes', () => {
    for (const config of all()) {
      const decoded = NodeConfig.decode(NodeConfig.encode(config).finish());
      expect(JSON.stringify(renderXrayConfig(decoded, opts))).toBe(JSON.stringify(renderXrayConfig(config, opts)));
    }
  });

  it('map order does not matter: WebSocket headers come out sorted by name', () => {
    const a = xrayTransportsNode();
    const b = xrayTransportsNode();
    const ws = b.xray?.inbounds.find((i) => i.tag === 'vmess-ws')?.stream?.ws;
    if (!ws) throw new Error('fixture changed');
    ws.headers = Object.fromEntries(Object.entries(ws.headers).reverse());
    expect(JSON.stringify(renderXrayConfig(b, opts))).toBe(JSON.stringify(renderXrayConfig(a, opts)));
  });

  it('rendering does not modify its input', () => {
    for (const config of all()) {
      const before = JSON.stringify(NodeConfig.toJSON(config));
      renderXrayConfig(config, { ...opts, apiPort: 10085 });
      expect(JSON.stringify(NodeConfig.toJSON(config))).toBe(before);
    }
  });
});

describe('input Xray would reject or could not serve', () => {
  const ss = (users: ReturnType<typeof ssUser>[]) =>
    nodeConfig([inbound({ tag: 'ss', protocol: Protocol.SHADOWSOCKS, port: 8388, users })]);
  const fails = (config: NodeConfig, message: RegExp, o: RenderOptions = opts) => {
    expect(() => renderXrayConfig(config, o)).toThrow(XrayConfigError);
    expect(() => renderXrayConfig(config, o)).toThrow(message);
  };

  it('Shadowsocks 2022 with several users and no server key', () => {
    fails(
      ss([ssUser(1, '2022-blake3-aes-256-gcm', SS32[0]), ssUser(2, '2022-blake3-aes-256-gcm', SS32[1])]),
      /needs the inbound's server key/,
    );
  });

  it('Shadowsocks 2022 multi-user with the chacha20 method (Xray: only blake3-aes)', () => {
    fails(
      ss([
        ssUser(1, '2022-blake3-chacha20-poly1305', `${SS32[0]}:${SS32[1]}`),
        ssUser(2, '2022-blake3-chacha20-poly1305', `${SS32[0]}:${SS32[2]}`),
      ]),
      /only with the blake3-aes methods/,
    );
  });

  it('Shadowsocks 2022: different server keys, mixed forms, mixed methods', () => {
    fails(
      ss([ssUser(1, '2022-blake3-aes-128-gcm', `${SS16[0]}:${SS16[1]}`), ssUser(2, '2022-blake3-aes-128-gcm', `${SS16[1]}:${SS16[2]}`)]),
      /share one server key/,
    );
    fails(ss([ssUser(1, '2022-blake3-aes-128-gcm', `${SS16[0]}:${SS16[1]}`), ssUser(2, '2022-blake3-aes-128-gcm', SS16[2])]), /or none/);
    fails(ss([ssUser(1, '2022-blake3-aes-128-gcm', SS16[0]), ssUser(2, 'aes-128-gcm', 'x')]), /one method for all users/);
  });

  it('a TLS inbound whose certificate is not in NodeConfig.certificates', () => {
    const config = nodeConfig([
      inbound({ tag: 'v', protocol: Protocol.VLESS, port: 443, stream: { network: 1, ...tls() }, users: [vlessUser(1)] }),
    ]);
    config.certificates = [];
    fails(config, /is not in NodeConfig.certificates/);
  });

  it('a user whose account does not match the inbound protocol', () => {
    fails(
      nodeConfig([inbound({ tag: 'v', protocol: Protocol.VLESS, port: 443, users: [ssUser(1, 'aes-128-gcm', 'x')] })]),
      /has no vless account/,
    );
  });

  it('settings of another transport than the network', () => {
    fails(
      nodeConfig([
        inbound({
          tag: 'v',
          protocol: Protocol.VLESS,
          port: 443,
          stream: { network: 1, security: 1, ws: { path: '/', headers: {} } },
          users: [vlessUser(1)],
        }),
      ]),
      /ws settings given for network tcp/,
    );
  });

  it('duplicate tags, the reserved api tag, a rule to a missing outbound', () => {
    const twice = nodeConfig([
      inbound({ tag: 'v', protocol: Protocol.VLESS, port: 443, users: [] }),
      inbound({ tag: 'v', protocol: Protocol.VLESS, port: 444, users: [] }),
    ]);
    fails(twice, /duplicate tag "v"/);
    fails(nodeConfig([inbound({ tag: 'api', protocol: Protocol.VLESS, port: 443, users: [] })]), /reserved/, { ...opts, apiPort: 10085 });
    fails(
      nodeConfig([inbound({ tag: 'v', protocol: Protocol.VLESS, port: 443, users: [] })], {
        rules: [{ inboundTag: 'v', outboundTag: 'nowhere', protocols: [] }],
      }),
      /no outbound tagged "nowhere"/,
    );
  });
});
