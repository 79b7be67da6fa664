import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The webhook signature (docs/notifications.md, "Verifying a delivery"): every delivery
 * carries `X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * the key being the endpoint's whole secret string (`whsec_...`) as UTF-8. The timestamp is
 * signed with the body, so a receiver that refuses old timestamps refuses replays. `sign` is
 * what we send; `verify` is what the docs tell receivers to do (and what our tests do).
 */
export const SIGNATURE_HEADER = 'X-Svc-Signature';
/** How old a signature a receiver should accept, by default (clock skew plus transit). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const mac = (secret: string, t: number, body: string): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

export function signWebhook(secret: string, body: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${mac(secret, t, body)}`;
}

/**
 * True when `header` carries a v1 signature of `body` under `secret` whose timestamp is within
 * `toleranceSeconds` of `now`. Several v1 values are accepted (any may match), unknown schemes
 * ignored, so the scheme can grow.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string | null | undefined,
  opts: { now?: Date; toleranceSeconds?: number } = {},
): boolean {
  if (!header || header.length > 2048) return false;
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === 't' && v && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)) v1.push(v);
  }
  if (t === undefined || v1.length === 0) return false;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(mac(secret, t, body), 'hex');
  return v1.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
}
