import { type NodeConfig, type Outbound, Protocol, type RoutingRule } from '@svc/proto';
import { renderInbound } from './render-inbound.ts';
import { renderStream } from './render-stream.ts';
import { API_LISTEN, API_TAG, type JsonObject, PROTOCOL_NAME, type RenderOptions, XrayConfigError, type XrayJson } from './xray-json.ts';

/**
 * NodeConfig -> Xray-core JSON configuration. Pure and deterministic: the output is built from
 * object literals in a fixed key order, lists keep the order of the NodeConfig, and the only
 * map in the contract (WebSocket headers) is emitted sorted by name, so the same NodeConfig
 * always gives byte-identical `JSON.stringify` output.
 *
 * The contract carries no file paths: `certificatePaths` tells where the agent wrote the PEM
 * files of a certificate (NodeConfig.certificates[].id).
 */

/**
 * Renders the Xray JSON configuration of a NodeConfig. Throws XrayConfigError for input Xray
 * would reject or could not run as intended (see README: Shadowsocks 2022 needs a server key).
 */
export function renderXrayConfig(config: NodeConfig, opts: RenderOptions): XrayJson {
  const xray = config.xray ?? { inbounds: [], outbounds: [], routingRules: [] };
  const certificateIds = new Set(config.certificates.map((c) => c.id));
  const withApi = opts.apiPort !== undefined;
  if (withApi) {
    const port = opts.apiPort as number;
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new XrayConfigError('apiPort', `not a TCP port: ${port}`);
  }

  checkUniqueTags('inbounds', xray.inbounds, withApi);
  checkUniqueTags('outbounds', xray.outbounds, withApi);

  const inbounds: JsonObject[] = [];
  if (withApi)
    inbounds.push({
      tag: API_TAG,
      listen: API_LISTEN,
      port: opts.apiPort as number,
      protocol: 'dokodemo-door',
      settings: { address: API_LISTEN },
    });
  for (const [index, inbound] of xray.inbounds.entries())
    inbounds.push(renderInbound(`inbounds[${index}](${inbound.tag})`, inbound, opts, certificateIds));

  const outbounds = xray.outbounds.map((o, index) => renderOutbound(`outbounds[${index}](${o.tag})`, o));

  const outboundTags = new Set(xray.outbounds.map((o) => o.tag));
  const rules: JsonObject[] = [];
  if (withApi) rules.push({ type: 'field', inboundTag: [API_TAG], outboundTag: API_TAG });
  for (const [index, rule] of xray.routingRules.entries()) rules.push(renderRule(`routingRules[${index}]`, rule, outboundTags));

  const log = { loglevel: opts.logLevel ?? 'warning' };
  const routing = { domainStrategy: 'AsIs', rules };
  if (!withApi) return { log, inbounds, outbounds, routing };
  return {
    log,
    api: { tag: API_TAG, services: ['StatsService', 'HandlerService'] },
    stats: {},
    // statsUserOnline: Xray's online addresses per user (the agent's device count; v2ray 4 ignores it).
    policy: { levels: { '0': { statsUserUplink: true, statsUserDownlink: true, statsUserOnline: true } } },
    inbounds,
    outbounds,
    routing,
  };
}

function checkUniqueTags(path: string, items: Array<{ tag: string }>, withApi: boolean): void {
  const seen = new Set<string>();
  for (const [index, { tag }] of items.entries()) {
    if (tag === '') throw new XrayConfigError(`${path}[${index}]`, 'empty tag');
    if (seen.has(tag)) throw new XrayConfigError(`${path}[${index}]`, `duplicate tag ${JSON.stringify(tag)}`);
    if (withApi && tag === API_TAG) throw new XrayConfigError(`${path}[${index}]`, `tag "${API_TAG}" is reserved for the stats API`);
    seen.add(tag);
  }
}

function renderOutbound(path: string, o: Outbound): JsonObject {
  const protocol = PROTOCOL_NAME[o.protocol];
  switch (o.protocol) {
    case Protocol.FREEDOM:
    case Protocol.BLACKHOLE:
      return { tag: o.tag, protocol: protocol as string };
    case Protocol.VLESS:
    case Protocol.TROJAN:
    case Protocol.SHADOWSOCKS:
      break;
    default:
      throw new XrayConfigError(path, `unsupported outbound protocol ${Protocol[o.protocol] ?? o.protocol}`);
  }
  if (o.address === '') throw new XrayConfigError(path, 'empty next-hop address');
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new XrayConfigError(path, `not a TCP port: ${o.port}`);

  let settings: JsonObject;
  if (o.protocol === Protocol.VLESS) {
    if (!o.vless) throw new XrayConfigError(path, 'vless outbound without a vless account');
    const user: JsonObject = { id: o.vless.id, encryption: 'none' };
    if (o.vless.flow) user.flow = o.vless.flow;
    settings = { vnext: [{ address: o.address, port: o.port, users: [user] }] };
  } else if (o.protocol === Protocol.TROJAN) {
    if (!o.trojan) throw new XrayConfigError(path, 'trojan outbound without a trojan account');
    settings = { servers: [{ address: o.address, port: o.port, password: o.trojan.password }] };
  } else {
    if (!o.shadowsocks) throw new XrayConfigError(path, 'shadowsocks outbound without a shadowsocks account');
    // For 2022 methods the password goes as is: a single key, or <server key>:<user key>.
    settings = { servers: [{ address: o.address, port: o.port, method: o.shadowsocks.method, password: o.shadowsocks.password }] };
  }
  const out: JsonObject = { tag: o.tag, protocol: protocol as string, settings };
  if (o.stream) out.streamSettings = renderStream(`${path}.stream`, o.stream, 'client', undefined, undefined);
  return out;
}

function renderRule(path: string, r: RoutingRule, outboundTags: Set<string>): JsonObject {
  if (r.inboundTag === '') throw new XrayConfigError(path, 'empty inbound tag');
  if (!outboundTags.has(r.outboundTag)) throw new XrayConfigError(path, `no outbound tagged ${JSON.stringify(r.outboundTag)}`);
  const out: JsonObject = { type: 'field', inboundTag: [r.inboundTag], outboundTag: r.outboundTag };
  if (r.protocols.length > 0) out.protocol = [...r.protocols];
  return out;
}
