import { WEBHOOK_MAX_BYTES, type WebhookHeaders, WebhookRefusedError } from '@svc/domain';

/** The single value of a header (case-insensitive); a repeated header is refused by the caller as missing. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(lower) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | string[] | undefined>>;
  for (const [k, v] of Object.entries(record)) {
    if (k.toLowerCase() !== lower) continue;
    return typeof v === 'string' ? v : undefined;
  }
  return undefined;
}

/** Refuses a body that is not a Buffer or is larger than the limit, before anything reads it. */
export function boundedBody(provider: string, rawBody: unknown, max = WEBHOOK_MAX_BYTES): Buffer {
  if (!Buffer.isBuffer(rawBody)) throw new WebhookRefusedError(provider, 'malformed', 'the body is not raw bytes');
  if (rawBody.length > max) throw new WebhookRefusedError(provider, 'too-large', `the body is larger than ${max} bytes`);
  return rawBody;
}

/** The body as a JSON object (not an array, not a scalar), or the typed refusal. */
export function jsonObjectBody(provider: string, rawBody: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookRefusedError(provider, 'malformed', 'the body is not JSON');
  }
  if (!isRecord(value)) throw new WebhookRefusedError(provider, 'malformed', 'the body is not a JSON object');
  return value;
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field of a hostile object, bounded and printable, or undefined. */
export function textField(obj: unknown, key: string, max = 255): string | undefined {
  if (!isRecord(obj)) return undefined;
  const v = obj[key];
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v !== 'string' || v.length === 0 || v.length > max) return undefined;
  return /^[\x20-\x7e]+$/.test(v) ? v : undefined;
}

/** An ISO timestamp from a unix-seconds number or a date string, or undefined. */
export function isoTime(v: unknown): string | undefined {
  const d = typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000) : typeof v === 'string' && v.length <= 64 ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) return undefined;
  return d.toISOString();
}
