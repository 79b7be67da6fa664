import { type Inbound, type InboundUser, Protocol, type ShadowsocksAccount } from '@svc/proto';
import { renderStream } from './render-stream.ts';
import { type JsonObject, PROTOCOL_NAME, type RenderOptions, XrayConfigError } from './xray-json.ts';

/* An inbound and its users' accounts, Shadowsocks' layouts included. */

/** Shadowsocks 2022 (SIP022) methods: `2022-blake3-*`. */
export const isShadowsocks2022 = (method: string): boolean => method.startsWith('2022-');

export function renderInbound(path: string, i: Inbound, opts: RenderOptions, certificateIds: Set<string>): JsonObject {
  const protocol = PROTOCOL_NAME[i.protocol];
  if (!protocol || i.protocol === Protocol.FREEDOM || i.protocol === Protocol.BLACKHOLE)
    throw new XrayConfigError(path, `unsupported inbound protocol ${Protocol[i.protocol] ?? i.protocol}`);
  if (!Number.isInteger(i.port) || i.port < 1 || i.port > 65535) throw new XrayConfigError(path, `not a TCP port: ${i.port}`);

  let settings: JsonObject;
  switch (i.protocol) {
    case Protocol.VLESS:
      settings = {
        clients: i.users.map((u, k) => {
          const a = account(`${path}.users[${k}]`, u, 'vless');
          return withEmail({ id: a.id, ...(a.flow ? { flow: a.flow } : {}) }, u.email);
        }),
        decryption: 'none',
      };
      break;
    case Protocol.VMESS:
      settings = { clients: i.users.map((u, k) => withEmail({ id: account(`${path}.users[${k}]`, u, 'vmess').id }, u.email)) };
      break;
    case Protocol.TROJAN:
      settings = {
        clients: i.users.map((u, k) => withEmail({ password: account(`${path}.users[${k}]`, u, 'trojan').password }, u.email)),
      };
      break;
    default:
      settings = shadowsocksInbound(path, i.users);
  }

  const out: JsonObject = { tag: i.tag };
  if (i.listen !== '') out.listen = i.listen;
  out.port = i.port;
  out.protocol = protocol;
  out.settings = settings;
  if (i.stream) out.streamSettings = renderStream(`${path}.stream`, i.stream, 'server', opts, certificateIds);
  if (i.sniffing)
    out.sniffing = { enabled: i.sniffing.enabled, destOverride: [...i.sniffing.destOverride], routeOnly: i.sniffing.routeOnly };
  return out;
}

function withEmail(client: JsonObject, email: string): JsonObject {
  return email === '' ? client : { ...client, email };
}

type AccountKind = 'vless' | 'vmess' | 'trojan' | 'shadowsocks';

function account<K extends AccountKind>(path: string, u: InboundUser, kind: K): NonNullable<InboundUser[K]> {
  const a = u[kind];
  if (!a) throw new XrayConfigError(path, `user ${JSON.stringify(u.email)} has no ${kind} account`);
  return a as NonNullable<InboundUser[K]>;
}

/**
 * Shadowsocks inbound settings. The method lives in the users' accounts only (NodeConfig has no
 * inbound-level method or key).
 *
 * - No users: `clients: []` and no method. Xray then builds a classic (non-2022) server without
 *   users, which accepts nobody. (Never a settings-level password: Xray turns a 2022 inbound
 *   without clients into a single-user server keyed by it.)
 * - Classic AEAD, one user: the single-user layout (settings-level method, password, email),
 *   the one both Xray and v2ray accept.
 * - Classic AEAD, several users: per-client method and password in `clients` (Xray's
 *   multi-user layout; v2ray has none).
 * - 2022, users whose password is `<server key>:<user key>` (the form a SIP022 multi-user
 *   client sends; one server key per inbound): Xray's multi-user layout, settings-level method
 *   and server key, clients with their user key and no method. Xray supports it only for the
 *   blake3-aes methods.
 * - 2022, one user with a plain key: the single-user layout.
 * - 2022, several users with plain keys: XrayConfigError. Xray cannot serve them without a
 *   server key, which NodeConfig does not carry.
 */
function shadowsocksInbound(path: string, users: InboundUser[]): JsonObject {
  const accounts: ShadowsocksAccount[] = users.map((u, k) => account(`${path}.users[${k}]`, u, 'shadowsocks'));
  for (const [k, a] of accounts.entries()) {
    if (a.method === '') throw new XrayConfigError(`${path}.users[${k}]`, 'empty shadowsocks method');
    if (a.password === '') throw new XrayConfigError(`${path}.users[${k}]`, 'empty shadowsocks password');
  }
  const network = 'tcp,udp';
  if (accounts.length === 0) return { clients: [], network };
  const is2022 = accounts.some((a) => isShadowsocks2022(a.method));

  if (!is2022) {
    const only = accounts.length === 1 ? (accounts[0] as ShadowsocksAccount) : undefined;
    if (only) return { ...withEmail({ method: only.method, password: only.password }, (users[0] as InboundUser).email), network };
    return {
      clients: accounts.map((a, k) => withEmail({ method: a.method, password: a.password }, (users[k] as InboundUser).email)),
      network,
    };
  }

  const method = (accounts[0] as ShadowsocksAccount).method;
  for (const [k, a] of accounts.entries())
    if (a.method !== method)
      throw new XrayConfigError(
        `${path}.users[${k}]`,
        `a Shadowsocks 2022 inbound takes one method for all users (${method}, not ${a.method})`,
      );

  const split = accounts.map((a) => a.password.split(':'));
  const colon = split.filter((parts) => parts.length > 1).length;
  if (colon === 0) {
    if (accounts.length === 1)
      return { ...withEmail({ method, password: (accounts[0] as ShadowsocksAccount).password }, (users[0] as InboundUser).email), network };
    throw new XrayConfigError(
      path,
      `Shadowsocks 2022 with ${accounts.length} users needs the inbound's server key: give each user's password as <server key>:<user key>`,
    );
  }
  if (colon !== accounts.length)
    throw new XrayConfigError(path, 'every Shadowsocks 2022 user password, or none, must be <server key>:<user key>');
  const serverKey = (split[0] as string[])[0] as string;
  for (const [k, parts] of split.entries()) {
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '')
      throw new XrayConfigError(`${path}.users[${k}]`, 'a Shadowsocks 2022 password is <server key>:<user key>');
    if (parts[0] !== serverKey)
      throw new XrayConfigError(`${path}.users[${k}]`, 'users of one Shadowsocks 2022 inbound share one server key');
  }
  if (!method.includes('aes'))
    throw new XrayConfigError(path, `Xray serves several Shadowsocks 2022 users only with the blake3-aes methods, not ${method}`);
  return {
    method,
    password: serverKey,
    clients: split.map((parts, k) => withEmail({ password: parts[1] as string }, (users[k] as InboundUser).email)),
    network,
  };
}
