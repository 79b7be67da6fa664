/** Byte-level helpers shared by the renderers: base64 flavours and key-sorted JSON. */

/** Standard base64 (with padding) of the UTF-8 bytes: what v2rayN-style subscription bodies and vmess links use. */
export function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** URL-safe base64 without padding (RFC 4648 §5): SIP002's userinfo for classic Shadowsocks methods. */
export function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** Recursively sorts object keys (arrays keep their order), so serialising is byte-stable. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out as T;
  }
  return value;
}

/** JSON with sorted keys; `indent` 0 gives the compact form. */
export function canonicalJson(value: unknown, indent = 2): string {
  return JSON.stringify(sortKeys(value), null, indent || undefined);
}
