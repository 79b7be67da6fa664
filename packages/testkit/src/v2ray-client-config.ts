import { type Inbound, type InboundUser, Network, SecurityT } from '@svc/proto';

/**
 * The other end of a node's inbound: a v2ray 4.x CLIENT config whose local HTTP proxy inbounds
 * (one per route, on 127.0.0.1) each go out as one user of one inbound of the node. A test sends
 * plain HTTP requests through `http://127.0.0.1:<proxyPort>` and so connects to the node as that
 * user, with an implementation independent of ours. TCP transport, with or without TLS (the
 * node's self-signed certificate is accepted).
 */

export interface V2rayClientRoute {
  /** Local HTTP proxy port of this route. */
  proxyPort: number;
  /** Where the node's inbound listens. */
  server: { address: string; port: number };
  /** The node's inbound (NodeConfig.xray.inbounds[]): protocol and stream. */
  inbound: Inbound;
  /** Whose credentials the route connects with. */
  user: InboundUser;
}

export function v2rayClientConfig(routes: V2rayClientRoute[]): Record<string, unknown> {
  return {
    log: { loglevel: 'warning' },
    inbounds: routes.map((r, k) => ({ tag: `proxy-${k}`, listen: '127.0.0.1', port: r.proxyPort, protocol: 'http', settings: {} })),
    outbounds: routes.map((r, k) => ({ tag: `node-${k}`, ...clientOutbound(r) })),
    routing: { rules: routes.map((_, k) => ({ type: 'field', inboundTag: [`proxy-${k}`], outboundTag: `node-${k}` })) },
  };
}

function clientOutbound({ server, inbound, user }: V2rayClientRoute): Record<string, unknown> {
  const { address, port } = server;
  let protocol: string;
  let settings: Record<string, unknown>;
  if (user.vmess) {
    protocol = 'vmess';
    settings = { vnext: [{ address, port, users: [{ id: user.vmess.id, alterId: 0, security: 'auto' }] }] };
  } else if (user.vless) {
    protocol = 'vless';
    const u = { id: user.vless.id, encryption: 'none', ...(user.vless.flow ? { flow: user.vless.flow } : {}) };
    settings = { vnext: [{ address, port, users: [u] }] };
  } else if (user.trojan) {
    protocol = 'trojan';
    settings = { servers: [{ address, port, password: user.trojan.password }] };
  } else if (user.shadowsocks) {
    protocol = 'shadowsocks';
    settings = { servers: [{ address, port, method: user.shadowsocks.method, password: user.shadowsocks.password }] };
  } else throw new Error(`user ${user.email} has no account`);

  const stream = inbound.stream;
  if (stream && stream.network !== Network.TCP) throw new Error(`inbound ${inbound.tag}: only tcp is supported by this client config`);
  const tls = stream?.security === SecurityT.TLS;
  if (stream && !tls && stream.security !== SecurityT.NONE) throw new Error(`inbound ${inbound.tag}: only none or tls security`);
  const serverName = stream?.tlsSettings?.serverNames[0];
  const streamSettings = tls
    ? { network: 'tcp', security: 'tls', tlsSettings: { allowInsecure: true, ...(serverName ? { serverName } : {}) } }
    : { network: 'tcp', security: 'none' };
  return { protocol, settings, streamSettings };
}
