import { z } from 'zod';
import { EVENT_TYPES } from '../events/catalogue.ts';
import { unique } from '../shared/fields.ts';

/** Longest endpoint URL accepted. */
export const WEBHOOK_URL_MAX = 2048;

/**
 * Where deliveries go: an absolute http(s) URL with a host, no user:password (the signature
 * authenticates us; credentials in URLs end up in logs), no fragment, at most 2,048
 * characters. Where it may point is decided at each delivery, after the name is resolved, by the
 * outbound policy (docs/notifications.md, "Where deliveries may go"): link-local and metadata
 * addresses never, loopback and private networks when the owner allows them.
 */
export function webhookUrlProblem(raw: string): string | undefined {
  if (raw.length > WEBHOOK_URL_MAX) return `must be at most ${WEBHOOK_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry credentials (user:password@): deliveries are signed instead';
  if (url.hash) return 'must not have a #fragment';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(raw)) return 'must not contain spaces or control characters';
  return undefined;
}

export const WebhookUrl = z
  .string()
  .trim()
  .min(1, 'required')
  .max(WEBHOOK_URL_MAX, `must be at most ${WEBHOOK_URL_MAX} characters`)
  .superRefine((v, ctx) => {
    const problem = webhookUrlProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ description: 'http:// or https:// URL the deliveries are POSTed to (no credentials, no fragment, max 2048 characters)' });

export const WebhookDescription = z
  .string()
  .trim()
  .max(500, 'must be at most 500 characters')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .refine((v) => !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v), 'must not contain control characters');

/** The event types an endpoint receives: a list from the catalogue, or null for every type (today's and future ones). */
export const WebhookEventTypes = z
  .array(z.enum(EVENT_TYPES as [string, ...string[]]))
  .min(1, 'name at least one event type, or null for every type')
  .max(100)
  .transform((types) => unique(types))
  .nullable()
  .meta({ description: `event types delivered; null = every type. Known types: ${EVENT_TYPES.join(', ')}` });

/** Is an event of `type` delivered to an endpoint subscribed to `subscribed` (null = all)? */
export const subscribes = (subscribed: readonly string[] | null, type: string): boolean => subscribed === null || subscribed.includes(type);

/** The URL as the audit log keeps it: without the query (receivers put tokens there). */
export function auditableUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(invalid)';
  }
}
