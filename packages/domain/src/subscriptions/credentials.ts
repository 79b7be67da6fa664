import { randomBytes, randomUUID } from 'node:crypto';
import type { Sealer } from '../shared/sealed.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';

/** The link token: 32 random bytes (256 bits), base64url (43 characters). */
export const LINK_TOKEN_BYTES = 32;

export interface SubscriptionCredentials {
  vless_uuid: string;
  vmess_uuid: string;
  /** 24 random bytes (192 bits), base64url. */
  trojan_password: string;
  /**
   * 32 random bytes, standard base64: as is, a valid user key for 2022-blake3-aes-256-gcm and
   * a strong password for the classic AEAD methods.
   * 2022-blake3-aes-128-gcm needs a 16-byte key: see `shadowsocksUserKey`.
   */
  shadowsocks_password: string;
  token_hash: string;
  token_enc: string;
}

/** Fresh proxy credentials and link token; returns the token in clear only to build the link. */
export function newCredentials(secrets: Sealer): { credentials: SubscriptionCredentials; token: string } {
  const token = randomToken(LINK_TOKEN_BYTES);
  return {
    token,
    credentials: {
      vless_uuid: randomUUID(),
      vmess_uuid: randomUUID(),
      trojan_password: randomBytes(24).toString('base64url'),
      shadowsocks_password: randomBytes(32).toString('base64'),
      token_hash: sha256Hex(token),
      token_enc: secrets.seal(token),
    },
  };
}

/** SHA-256 of a presented link token: what GET /sub/{token} looks up. */
export const linkTokenHash = (token: string): string => sha256Hex(token);

/**
 * The per-user key a Shadowsocks inbound of `method` needs, from the stored 32-byte key:
 * the 2022 AES-128 method takes exactly 16 bytes (its first 16, base64); every other
 * method takes the stored value unchanged.
 */
export function shadowsocksUserKey(method: string, stored: string): string {
  if (method === '2022-blake3-aes-128-gcm') return Buffer.from(stored, 'base64').subarray(0, 16).toString('base64');
  return stored;
}

/** Bytes of a Shadowsocks 2022 key per method; classic AEAD methods have no server key. */
const SS2022_KEY_BYTES: Record<string, number> = { '2022-blake3-aes-128-gcm': 16, '2022-blake3-aes-256-gcm': 32 };

/** A fresh server key for an inbound profile of `method`, or null when the method has none. */
export function newShadowsocksServerKey(method: string | null): string | null {
  const bytes = method ? SS2022_KEY_BYTES[method] : undefined;
  return bytes ? randomBytes(bytes).toString('base64') : null;
}

/**
 * The one rule for a user's Shadowsocks password, used by the node config and by the
 * user's share link alike: for 2022 methods `<server key>:<user key>` (Xray's multi-user
 * layout), for classic AEAD methods the user key alone.
 */
export function shadowsocksPassword(method: string, serverKey: string | null, stored: string): string {
  const userKey = shadowsocksUserKey(method, stored);
  return SS2022_KEY_BYTES[method] && serverKey ? `${serverKey}:${userKey}` : userKey;
}
