// The desired states the agent benchmarks apply: a node where every subscription is a user of each
// of its inbounds (VMess, VLESS and Trojan over plain TCP, the subset v2ray 4.34 runs), with
// emails `<subscription id>@svc` as the control plane writes them, credentials derived from the
// user's number so that every run builds the same state.
import { createHash } from 'node:crypto';
import { type DesiredState, type Inbound, type InboundUser, Network, type NodeConfig, Protocol, SecurityT } from '@svc/proto';

export type UserProtocol = 'vmess' | 'vless' | 'trojan';

const PROTOCOL: Record<UserProtocol, Protocol> = { vmess: Protocol.VMESS, vless: Protocol.VLESS, trojan: Protocol.TROJAN };

/** A stable UUID (v4 layout) for user `i`: the first 16 bytes of sha256("user-i"). */
function uuidOf(i: number): string {
  const b = createHash('sha256').update(`user-${i}`).digest();
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const emailOf = (i: number) => `sub_01jd${i.toString(32).padStart(22, '0')}@svc`;

/** User `i` of an inbound of `protocol`; `generation` changes its credentials (a key rotation). */
export function userOf(protocol: UserProtocol, i: number, generation = 0): InboundUser {
  const id = uuidOf(generation === 0 ? i : i + generation * 10_000_000);
  const email = emailOf(i);
  if (protocol === 'vmess') return { email, vmess: { id } };
  if (protocol === 'vless') return { email, vless: { id, flow: '' } };
  return { email, trojan: { password: id } };
}

export interface NodeShape {
  /** Inbounds, one per protocol, each with every user. */
  protocols: UserProtocol[];
  /** Port of each inbound, in the order of `protocols`. */
  ports: number[];
  users: number;
}

export const tagOf = (protocol: UserProtocol) => `${protocol}-tcp`;

/** The NodeConfig of a node of `shape`; `routeBittorrent` is a non-user change (a restart). */
export function nodeConfig(shape: NodeShape, opts: { routeBittorrent?: boolean } = {}): NodeConfig {
  const inbounds: Inbound[] = shape.protocols.map((p, k) => ({
    tag: tagOf(p),
    protocol: PROTOCOL[p],
    port: shape.ports[k] as number,
    listen: '127.0.0.1',
    stream: { network: Network.TCP, security: SecurityT.NONE, tcp: { acceptProxyProtocol: false } },
    sniffing: { enabled: true, destOverride: ['http', 'tls'], routeOnly: false },
    users: Array.from({ length: shape.users }, (_, i) => userOf(p, i)),
  }));
  return {
    xray: {
      inbounds,
      outbounds: [
        { tag: 'direct', protocol: Protocol.FREEDOM, address: '', port: 0, stream: undefined },
        { tag: 'block', protocol: Protocol.BLACKHOLE, address: '', port: 0, stream: undefined },
      ],
      routingRules: inbounds.flatMap((i) => [
        ...(opts.routeBittorrent ? [{ inboundTag: i.tag, outboundTag: 'block', protocols: ['bittorrent'] }] : []),
        { inboundTag: i.tag, outboundTag: 'direct', protocols: [] },
      ]),
    },
    certificates: [],
    userLimits: [],
  };
}

/** The same configuration as `config` with the users of `tag` replaced by `users`. */
export function withUsers(config: NodeConfig, tag: string, users: InboundUser[]): NodeConfig {
  const xray = config.xray;
  if (!xray) throw new Error('no xray config');
  return { ...config, xray: { ...xray, inbounds: xray.inbounds.map((i) => (i.tag === tag ? { ...i, users } : i)) } };
}

export const desired = (revision: number, config: NodeConfig): DesiredState => ({ revision: BigInt(revision), config });
