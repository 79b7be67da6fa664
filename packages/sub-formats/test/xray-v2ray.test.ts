import { v2rayAvailable, v2rayTest } from '@svc/testkit/v2ray';
import { describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { placeholderServer } from '../src/placeholder.ts';
import { renderXrayJson, xrayClientConfig } from '../src/xray-json.ts';
import { doc, everyCombination } from './fixtures.ts';

/**
 * The Xray client configs of the subset Xray shares with v2ray, loaded by an independent
 * implementation: Debian's `v2ray` (v4: `v2ray -test -config f.json`; v5: `v2ray test -c f.json`)
 * must answer exit 0. Shared: VLESS, VMess, Trojan and classic-AEAD Shadowsocks over tcp and ws,
 * with and without TLS, no Vision flow. REALITY, XHTTP, HTTPUpgrade, gRPC, Vision and
 * Shadowsocks 2022 are Xray-only and pinned by the golden file and xray-json.test.ts instead.
 */
const v2ray = v2rayAvailable();
const unavailable = v2ray.available ? null : v2ray.reason;
if (unavailable) console.warn(`v2ray config tests skipped: ${unavailable}`);

/** What v2ray has too: tcp or ws, no REALITY, no Vision flow, no Shadowsocks 2022. */
const isShared = (s: ServerEntry) =>
  (s.stream.network === 'tcp' || s.stream.network === 'ws') &&
  s.stream.security !== 'reality' &&
  !(s.protocol === 'vless' && s.flow) &&
  !(s.protocol === 'shadowsocks' && s.method?.startsWith('2022-'));

const SHARED = everyCombination().filter(isShared);

describe('v2ray loads the Xray client configs of the shared subset', () => {
  it('the shared subset covers every protocol x {tcp, ws} x {none, tls} that v2ray has', () => {
    const combos = new Set(SHARED.map((s) => `${s.protocol}/${s.stream.network}/${s.stream.security}`));
    for (const p of ['vless', 'vmess', 'trojan'])
      for (const n of ['tcp', 'ws']) for (const sec of ['none', 'tls']) expect(combos).toContain(`${p}/${n}/${sec}`);
    expect(combos).toContain('shadowsocks/tcp/none');
  });

  it.skipIf(unavailable).each(SHARED.map((s) => [s.name, s] as const))('%s', async (name, s) => {
    const { code, output } = await v2rayTest(xrayClientConfig(s), name);
    expect(code, `v2ray rejected ${name}:\n${output}`).toBe(0);
  });

  it.skipIf(unavailable)('the placeholder config of a non-active document', async () => {
    const [config] = JSON.parse(renderXrayJson(doc([], 'expired'))) as unknown[];
    const { code, output } = await v2rayTest(config, 'placeholder');
    expect(code, output).toBe(0);
    expect(config).toEqual(xrayClientConfig(placeholderServer('⛔ Subscription expired')));
  });

  it.skipIf(unavailable)('control: v2ray does reject a broken config (an unknown outbound protocol)', async () => {
    const config = xrayClientConfig(SHARED[0] as ServerEntry) as { outbounds: { protocol: string }[] };
    (config.outbounds[0] as { protocol: string }).protocol = 'no-such-protocol';
    const { code, output } = await v2rayTest(config, 'control');
    expect(code).not.toBe(0);
    expect(output).toMatch(/no-such-protocol|unknown|failed/i);
  });
});
