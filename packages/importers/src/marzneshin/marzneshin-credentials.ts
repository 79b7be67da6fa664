import { xxhash128 } from 'hash-wasm';

/** Marzneshin's AUTH_GENERATION_ALGORITHM: how a user's key becomes its proxy credentials. */
export type MarzneshinAuth = 'xxh128' | 'plain';
export const MARZNESHIN_AUTHS: readonly MarzneshinAuth[] = ['xxh128', 'plain'];

const HEX32 = /^[0-9a-f]{32}$/;
const asUuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/**
 * The credentials Marzneshin's nodes serve a user with, from its key (Marzneshin stores none):
 * - xxh128 (its default): XXH3-128 (seed 0) of the key's UTF-8 bytes; the UUID is the 16 digest
 *   bytes as they are (no version bits set), the password the 32-digit lower-case hex digest.
 * - plain: the key itself as the password, and as the UUID (it must then be 32 hex digits).
 * VLESS and VMess take the UUID; Trojan, Shadowsocks (and Hysteria 2, TUIC) the password.
 * Test vectors: shared/notes/import-sources.md, A.2.
 */
export async function marzneshinCredentials(key: string, auth: MarzneshinAuth): Promise<{ uuid: string; password: string }> {
  if (auth === 'plain') {
    const hex = key.toLowerCase().replaceAll('-', '');
    if (!HEX32.test(hex)) throw new Error('its key is not a UUID, which the plain algorithm needs');
    return { uuid: asUuid(hex), password: key };
  }
  const digest = await xxhash128(key);
  return { uuid: asUuid(digest), password: digest };
}
