import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Marzban's subscription tokens (and PasarGuard's before its v3.1), verified with the source
 * panel's secret (its `jwt.secret_key`, carried by the import) so the links customers already
 * hold keep answering (docs/import.md). Marzban mints a new token each time it shows a link,
 * so one user holds many valid tokens: they are checked by algorithm, never looked up.
 *
 * Two forms (facts: shared/notes/import-sources.md, section 1):
 * - compact (since Marzban 0.5.0): P + S, where P is the unpadded base64url of
 *   `username,unix-seconds` and S the first 10 characters of the base64url SHA-256 of P
 *   followed by the secret;
 * - legacy: an HS256 JWT signed with the secret, `{sub: username, access: "subscription", iat}`.
 */

/** What a valid token says: whose it is and when it was minted (unix seconds). */
export interface MarzbanTokenClaim {
  username: string;
  issuedAt: number;
}

/** The fixed header of Marzban's legacy JWT tokens ({"alg":"HS256","typ":"JWT"}). */
const JWT_HEADER = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.';
const SIGNATURE_CHARS = 10;
/** Longer than any token of a 32-character username; a longer path segment is not one. */
export const MARZBAN_TOKEN_MAX = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Marzban's usernames: 3 to 32 of letters, digits and - _ @ . (its own rule). */
const USERNAME = /^[A-Za-z0-9_@.-]{3,32}$/;

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** base64url without padding, decoded strictly: null unless it is exactly the encoding of its bytes. */
function strictBase64Url(text: string): Buffer | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** The compact token Marzban mints for `username` at `issuedAt` (tests and the import's own checks). */
export function marzbanCompactToken(secret: string, username: string, issuedAt: number): string {
  const payload = Buffer.from(`${username},${issuedAt}`, 'utf8').toString('base64url');
  return payload + compactSignature(payload, secret);
}

function compactSignature(payload: string, secret: string): string {
  return createHash('sha256')
    .update(payload + secret, 'utf8')
    .digest('base64url')
    .slice(0, SIGNATURE_CHARS);
}

/** The token's claim when `secret` signed it, in either form; null for anything else. */
export function readMarzbanToken(token: string, secret: string): MarzbanTokenClaim | null {
  if (token.length < 15 || token.length > MARZBAN_TOKEN_MAX || secret === '') return null;
  if (token.startsWith(JWT_HEADER)) return readLegacyJwt(token, secret);
  const payload = token.slice(0, -SIGNATURE_CHARS);
  const signature = token.slice(-SIGNATURE_CHARS);
  const bytes = strictBase64Url(payload);
  if (!bytes || !sameText(signature, compactSignature(payload, secret))) return null;
  const text = bytes.toString('utf8');
  const comma = text.lastIndexOf(',');
  if (comma < 0) return null;
  return claim(text.slice(0, comma), text.slice(comma + 1));
}

function readLegacyJwt(token: string, secret: string): MarzbanTokenClaim | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [header, body, signature] = parts as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${header}.${body}`).digest('base64url');
  if (!sameText(signature, expected)) return null;
  const bytes = strictBase64Url(body);
  if (!bytes) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null) return null;
  const { sub, access, iat } = claims as Record<string, unknown>;
  if (access !== 'subscription' || typeof sub !== 'string' || typeof iat !== 'number') return null;
  return claim(sub, String(Math.floor(iat)));
}

function claim(username: string, seconds: string): MarzbanTokenClaim | null {
  if (!USERNAME.test(username) || !/^\d{1,12}$/.test(seconds)) return null;
  return { username, issuedAt: Number(seconds) };
}

/**
 * Whether a verified token still opens its user's link, as Marzban decides it and as the import
 * narrows it: minted after the user was created, not before the link was revoked there, and not
 * after the import (a token the old panel minted since is not one the customer held).
 */
export function marzbanTokenHonoured(
  claim: MarzbanTokenClaim,
  user: { createdAt: Date; revokedAt: Date | null; importedAt: Date },
): boolean {
  const at = claim.issuedAt * 1000;
  if (user.createdAt.getTime() > at) return false;
  if (user.revokedAt && user.revokedAt.getTime() > at) return false;
  return at <= user.importedAt.getTime();
}
