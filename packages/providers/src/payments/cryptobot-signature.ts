import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The header Crypto Pay signs its webhooks in. */
export const CRYPTOBOT_SIGNATURE_HEADER = 'crypto-pay-api-signature';

/** Crypto Pay's webhook signature: hex HMAC-SHA256 of the raw body, keyed with SHA-256 of the app's API token. */
export function cryptobotSignature(apiToken: string, rawBody: Buffer): string {
  const key = createHash('sha256').update(apiToken, 'utf8').digest();
  return createHmac('sha256', key).update(rawBody).digest('hex');
}

/** Compares a received signature with the expected one in constant time (any malformed value is false). */
export function cryptobotSignatureMatches(apiToken: string, rawBody: Buffer, received: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(received)) return false;
  const expected = Buffer.from(cryptobotSignature(apiToken, rawBody), 'hex');
  return timingSafeEqual(expected, Buffer.from(received, 'hex'));
}
