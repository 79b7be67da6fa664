import { describe, expect, it } from 'vitest';
import {
  COMMON_CAPABILITIES,
  engineOf,
  engineRunsInbound,
  sameCapabilities,
  sniffingFor,
  XRAY_CAPABILITIES,
} from './engine-capabilities.ts';

const DEFAULT = { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false };

describe('the engine a node runs, from the version its agent reports', () => {
  it('svc-agent’s bare versions: 1.x and 24+ are Xray, 4.x and 5.x are V2Ray', () => {
    expect(['25.10.15', '24.9.30', '26.7.28', '1.8.24'].map((v) => engineOf(v).family)).toEqual(['xray', 'xray', 'xray', 'xray']);
    expect(['4.34.0', '4.45.2', '5.16.1'].map((v) => engineOf(v).family)).toEqual(['v2ray', 'v2ray', 'v2ray']);
  });

  it('a version naming its engine is that engine’s, whatever the number', () => {
    expect(engineOf('Xray 25.10.15 (Xray, Penetrates Everything.)').capabilities).toEqual(XRAY_CAPABILITIES);
    expect(engineOf('V2Ray 4.34.0 (user) 20230518').family).toBe('v2ray');
    expect(engineOf('v1.8.4').family).toBe('xray');
  });

  it('quic sniffing from Xray 1.5.6 and V2Ray 5.0.1; route-only from Xray 1.5.1; Shadowsocks without users from Xray 1.2.3', () => {
    const quic = (v: string) => engineOf(v).capabilities.sniffing.includes('quic');
    expect(['1.5.5', '1.5.6', '25.10.15', '4.34.0', '4.45.2', '5.0.1'].map(quic)).toEqual([false, true, true, false, false, true]);
    const routeOnly = (v: string) => engineOf(v).capabilities.route_only;
    expect(['1.5.0', '1.5.1', '25.10.15', '5.16.1'].map(routeOnly)).toEqual([false, true, true, false]);
    const emptySs = (v: string) => engineOf(v).capabilities.empty_shadowsocks;
    expect(['1.2.2', '1.2.3', '25.10.15', '4.34.0', '5.16.1'].map(emptySs)).toEqual([false, true, true, false, false]);
  });

  it('a version we cannot place gets what every engine accepts; a node that never reported is compiled for current Xray', () => {
    for (const v of ['', 'sing-box', '3.50.2', '2.0', 'custom-build'])
      expect(engineOf(v), JSON.stringify(v)).toMatchObject({ family: 'unknown', capabilities: COMMON_CAPABILITIES });
    expect(engineOf(null)).toEqual({ family: 'xray', version: null, capabilities: XRAY_CAPABILITIES });
  });

  it('two versions compile alike exactly when their capabilities are the same', () => {
    expect(sameCapabilities(engineOf('25.10.15').capabilities, engineOf('24.9.30').capabilities)).toBe(true);
    expect(sameCapabilities(engineOf('4.34.0').capabilities, engineOf('').capabilities)).toBe(true);
    expect(sameCapabilities(engineOf('4.34.0').capabilities, engineOf('5.16.1').capabilities)).toBe(false);
    expect(sameCapabilities(engineOf(null).capabilities, engineOf('4.34.0').capabilities)).toBe(false);
  });
});

describe('sniffing is compiled for the engine', () => {
  it('the default profile keeps quic on Xray and leaves it out on V2Ray 4', () => {
    expect(sniffingFor(DEFAULT, engineOf('25.10.15').capabilities)).toEqual(DEFAULT);
    expect(sniffingFor(DEFAULT, engineOf('4.34.0').capabilities)).toEqual({
      enabled: true,
      dest_override: ['http', 'tls'],
      route_only: false,
    });
  });

  it('bittorrent is never a destination override, on any engine', () => {
    const asked = { enabled: true, dest_override: ['http', 'bittorrent'], route_only: false };
    for (const v of ['25.10.15', '4.34.0', '']) expect(sniffingFor(asked, engineOf(v).capabilities).dest_override).toEqual(['http']);
  });

  it('route-only sniffing on an engine without routeOnly overrides nothing', () => {
    const asked = { enabled: true, dest_override: ['http', 'tls'], route_only: true };
    expect(sniffingFor(asked, engineOf('25.10.15').capabilities)).toEqual(asked);
    expect(sniffingFor(asked, engineOf('4.34.0').capabilities)).toEqual({ enabled: true, dest_override: [], route_only: false });
  });

  it('sniffing switched off stays off', () => {
    expect(sniffingFor({ enabled: false, dest_override: [], route_only: false }, COMMON_CAPABILITIES).enabled).toBe(false);
  });
});

describe('inbounds an engine cannot load are left out', () => {
  it('a Shadowsocks inbound without users runs on Xray, is left out on V2Ray; any other inbound runs empty', () => {
    expect(engineRunsInbound(engineOf('25.10.15').capabilities, 'shadowsocks', 0)).toBe(true);
    expect(engineRunsInbound(engineOf('4.34.0').capabilities, 'shadowsocks', 0)).toBe(false);
    expect(engineRunsInbound(engineOf('4.34.0').capabilities, 'shadowsocks', 1)).toBe(true);
    for (const p of ['vless', 'vmess', 'trojan'] as const) expect(engineRunsInbound(COMMON_CAPABILITIES, p, 0)).toBe(true);
  });
});
