import { stringify } from 'yaml';
import type { ServerEntry, SubscriptionDocument } from './model.ts';
import { servedServers, uniqueNames } from './placeholder.ts';
import { grpcOf, httpTransport, realityOf, splitEarlyData, tlsOf, unusableReason, visionFlow, xhttpMode } from './stream.ts';

/**
 * Clash Meta / mihomo YAML (clash-verge-rev, Clash Meta for Android, mihomo, FlClash, Stash):
 * `proxies`, a select group over a url-test group and every proxy, `rules: [MATCH,<group>]`.
 *
 * Field names are mihomo's (adapter/outbound/*.go, wiki.metacubex.one/config/proxies/): VLESS and
 * VMess name the TLS server `servername`, Trojan `sni`; HTTPUpgrade is `network: ws` with
 * `ws-opts.v2ray-http-upgrade: true`; gRPC is always "gun" (a multi-mode Xray server accepts it).
 *
 * Skipped (see `clashMetaSkipReason`): what `unusableReason` rejects; Trojan without TLS (mihomo's
 * Trojan always runs TLS); XHTTP except for VLESS, the only protocol mihomo gives it (mihomo
 * v1.19.22+, MetaCubeX/mihomo#2645). An older core reads `network: xhttp` as plain tcp and that
 * one proxy fails, the rest loads: pass `{ xhttp: false }` for clients known to be older.
 */

export interface ClashMetaOptions {
  /** Render VLESS XHTTP entries (default true; needs mihomo v1.19.22 or later). */
  xhttp?: boolean;
}

export const CLASH_SELECT_GROUP = 'Proxy';
export const CLASH_AUTO_GROUP = 'Auto';
const RESERVED = [CLASH_SELECT_GROUP, CLASH_AUTO_GROUP, 'DIRECT', 'REJECT', 'REJECT-DROP', 'PASS', 'COMPATIBLE', 'GLOBAL'];
const TEST_URL = 'https://www.gstatic.com/generate_204';

export function clashMetaSkipReason(s: ServerEntry, options: ClashMetaOptions = {}): string | undefined {
  const unusable = unusableReason(s);
  if (unusable) return unusable;
  if (s.protocol === 'trojan' && s.stream.security === 'none')
    return "mihomo's trojan always uses TLS; a plain trojan inbound cannot be expressed";
  if (s.stream.network === 'xhttp' && s.protocol !== 'vless') return 'mihomo supports XHTTP for VLESS only';
  if (s.stream.network === 'xhttp' && options.xhttp === false) return 'XHTTP turned off for this client (mihomo older than v1.19.22)';
  return undefined;
}

/** One mihomo proxy map for a server, named `name`. */
export function clashMetaProxy(s: ServerEntry, name: string = s.name): Record<string, unknown> {
  const proxy: Record<string, unknown> = { name, server: s.address, port: s.port, udp: true };
  switch (s.protocol) {
    case 'vless':
      Object.assign(proxy, { type: 'vless', uuid: s.uuid, flow: visionFlow(s) || undefined });
      break;
    case 'vmess':
      Object.assign(proxy, { type: 'vmess', uuid: s.uuid, alterId: 0, cipher: 'auto' });
      break;
    case 'trojan':
      Object.assign(proxy, { type: 'trojan', password: s.password });
      break;
    case 'shadowsocks':
      return Object.assign(proxy, { type: 'ss', cipher: s.method, password: s.password });
  }
  Object.assign(proxy, security(s), transport(s));
  return proxy;
}

export function renderClashMeta(doc: SubscriptionDocument, options: ClashMetaOptions = {}): string {
  const servers = servedServers(doc, (s) => clashMetaSkipReason(s, options));
  const names = uniqueNames(servers, RESERVED);
  const config = {
    'mixed-port': 7890,
    'allow-lan': false,
    mode: 'rule',
    'log-level': 'warning',
    proxies: servers.map((s, i) => clashMetaProxy(s, names[i])),
    'proxy-groups': [
      { name: CLASH_SELECT_GROUP, type: 'select', proxies: [CLASH_AUTO_GROUP, ...names] },
      { name: CLASH_AUTO_GROUP, type: 'url-test', proxies: names, url: TEST_URL, interval: 300, tolerance: 50 },
    ],
    rules: [`MATCH,${CLASH_SELECT_GROUP}`],
  };
  // YAML 1.1 quoting: strings a 1.1 reader would take for numbers or booleans (`yes`, `0123`, `1:20`) are quoted.
  return stringify(config, { version: '1.1', sortMapEntries: true, lineWidth: 0 });
}

function security(s: ServerEntry): Record<string, unknown> {
  const serverNameKey = s.protocol === 'trojan' ? 'sni' : 'servername';
  // Trojan has no `tls` switch in mihomo: it is always on.
  const tlsSwitch = s.protocol === 'trojan' ? {} : { tls: s.stream.security !== 'none' };
  const tls = tlsOf(s);
  if (tls) {
    return {
      ...tlsSwitch,
      [serverNameKey]: tls.sni || undefined,
      alpn: tls.alpn.length > 0 ? tls.alpn : undefined,
      'client-fingerprint': tls.fingerprint || undefined,
      'skip-cert-verify': tls.allowInsecure || undefined,
    };
  }
  const reality = realityOf(s);
  if (reality) {
    return {
      ...tlsSwitch,
      [serverNameKey]: reality.sni || undefined,
      'client-fingerprint': reality.fingerprint,
      'reality-opts': { 'public-key': reality.publicKey, 'short-id': reality.shortId || undefined },
    };
  }
  return tlsSwitch;
}

function transport(s: ServerEntry): Record<string, unknown> {
  const http = httpTransport(s);
  const headers = http?.host ? { Host: http.host } : undefined;
  switch (s.stream.network) {
    case 'tcp':
      return { network: 'tcp' };
    case 'ws': {
      const { path, maxEarlyData } = splitEarlyData(http?.path ?? '/');
      const early = maxEarlyData > 0 ? { 'max-early-data': maxEarlyData, 'early-data-header-name': 'Sec-WebSocket-Protocol' } : {};
      return { network: 'ws', 'ws-opts': { path, headers, ...early } };
    }
    case 'httpupgrade':
      return { network: 'ws', 'ws-opts': { path: http?.path, headers, 'v2ray-http-upgrade': true } };
    case 'grpc':
      return { network: 'grpc', 'grpc-opts': { 'grpc-service-name': grpcOf(s).serviceName } };
    case 'xhttp': {
      const mode = xhttpMode(s);
      return {
        network: 'xhttp',
        'xhttp-opts': { path: http?.path, host: http?.host || undefined, mode: mode === 'auto' ? undefined : mode },
      };
    }
  }
}
