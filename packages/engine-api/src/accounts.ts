import type { InboundUser } from '@svc/proto';
import { Status } from 'nice-grpc';
import { EngineApiError } from './errors.ts';
import type { EngineFlavour } from './flavour.ts';
import { reprefix } from './flavour.ts';
import { SecurityType } from './gen/xray/common/protocol/headers.ts';
import type { TypedMessage } from './gen/xray/common/serial/typed_message.ts';
import { CipherType, Account as ShadowsocksAccount } from './gen/xray/proxy/shadowsocks/config.ts';
import { Account as Shadowsocks2022Account } from './gen/xray/proxy/shadowsocks_2022/config.ts';
import { Account as TrojanAccount } from './gen/xray/proxy/trojan/config.ts';
import { Account as VlessAccount } from './gen/xray/proxy/vless/account.ts';
import { Account as VmessAccount } from './gen/xray/proxy/vmess/account.ts';

/**
 * The contract's InboundUser account (vless / vmess / trojan / shadowsocks oneof) as the
 * engine's TypedMessage account, named under the engine's prefix. The only per-engine
 * difference below the names is Shadowsocks: v2ray-core 4.x numbers its CipherType 1-3 where
 * Xray uses 5-8, knows no XChaCha20 and no Shadowsocks 2022.
 */

interface Codec<T> {
  readonly $type: string;
  encode(message: T): { finish(): Uint8Array };
}

const typed = <T>(codec: Codec<T>, message: T, prefix: string): TypedMessage => ({
  type: reprefix(codec.$type, prefix),
  value: codec.encode(message).finish(),
});

/** Classic AEAD methods (as in the config's `method`) -> each engine's CipherType number. */
const CIPHERS: Record<string, Record<EngineFlavour, number | undefined>> = {
  'aes-128-gcm': { xray: CipherType.AES_128_GCM, v2ray: 1 },
  'aes-256-gcm': { xray: CipherType.AES_256_GCM, v2ray: 2 },
  'chacha20-poly1305': { xray: CipherType.CHACHA20_POLY1305, v2ray: 3 },
  'chacha20-ietf-poly1305': { xray: CipherType.CHACHA20_POLY1305, v2ray: 3 },
  'xchacha20-poly1305': { xray: CipherType.XCHACHA20_POLY1305, v2ray: undefined },
  'xchacha20-ietf-poly1305': { xray: CipherType.XCHACHA20_POLY1305, v2ray: undefined },
};

const unsupported = (message: string) => new EngineApiError('unsupported', Status.UNKNOWN, message);

/** The engine's number of a classic Shadowsocks method, or undefined when that engine lacks it. */
export function shadowsocksCipherOf(method: string, flavour: EngineFlavour): number | undefined {
  return CIPHERS[method.toLowerCase()]?.[flavour];
}

/** Throws EngineApiError 'unsupported' for an account the engine cannot take at run time. */
export function engineAccount(user: InboundUser, flavour: EngineFlavour, prefix: string): TypedMessage {
  if (user.vless) return typed(VlessAccount, { id: user.vless.id, flow: user.vless.flow }, prefix);
  if (user.vmess) return typed(VmessAccount, { id: user.vmess.id, securitySettings: { type: SecurityType.AUTO } }, prefix);
  if (user.trojan) return typed(TrojanAccount, { password: user.trojan.password }, prefix);
  if (user.shadowsocks) {
    const { method, password } = user.shadowsocks;
    if (method.startsWith('2022-')) {
      if (flavour !== 'xray') throw unsupported(`${user.email}: ${flavour} has no Shadowsocks 2022 (${method})`);
      // A multi-user 2022 inbound holds the server key; each user brings its own key.
      const [serverKey, userKey, ...rest] = password.split(':');
      if (!serverKey || !userKey || rest.length > 0)
        throw unsupported(`${user.email}: a Shadowsocks 2022 user added at run time needs the password <server key>:<user key>`);
      return typed(Shadowsocks2022Account, { key: userKey }, prefix);
    }
    const cipher = shadowsocksCipherOf(method, flavour);
    if (cipher === undefined) throw unsupported(`${user.email}: Shadowsocks method ${method} is not available on ${flavour}`);
    return typed(ShadowsocksAccount, { password, cipherType: cipher as CipherType }, prefix);
  }
  throw unsupported(`${user.email}: the user has no account`);
}
