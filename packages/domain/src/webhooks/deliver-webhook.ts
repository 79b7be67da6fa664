import type { DomainDeps } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import { outboundFailure, outboundReason } from '../shared/outbound.ts';
import { WEBHOOK_TEST_EVENT } from './webhook-envelope.ts';
import { SIGNATURE_HEADER, signWebhook } from './webhook-signature.ts';

/**
 * Waits after a failed attempt, by attempt number: 30 s, 2 min, 10 min, 1 h, 3 h, 6 h, 12 h.
 * The 8th failure is final (about 22 hours after the first attempt).
 */
export const WEBHOOK_BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000] as const;
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_BACKOFF_MS.length + 1;
/** An attempt that took longer is a failure (a receiver should answer at once and work later). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** A claimed attempt is not claimed again for this long (a worker that died mid-attempt is retried after it). */
const LEASE_MS = 60_000;
const EXCERPT_BYTES = 256;
const ERROR_MAX = 500;

type Deps = Pick<DomainDeps, 'db' | 'clock' | 'log' | 'secrets' | 'outbound'>;

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'not-due';

/**
 * One attempt of one delivery (the `webhooks.deliver` job), if it is still pending and due:
 * claims it (attempts + 1, not due again for a lease, in one UPDATE: two workers never both
 * send an attempt), POSTs the envelope signed under the endpoint's secret through the outbound
 * client (the destination policy: docs/notifications.md, "Where deliveries may go"; no
 * redirects followed, 10 s timeout), and writes the outcome: a 2xx is success; anything else is
 * tried again after the backoff, or failed after the last attempt. Only a short, bounded excerpt
 * of the response is kept; a call that got no answer keeps the policy's reason ("not
 * reachable", "the destination is refused: ..."), never the connection-level detail. Deliveries
 * are at least once: a worker dying after the POST but before the write sends that attempt again
 * after the lease.
 */
export async function deliverWebhook(deps: Deps, id: string, opts: { timeoutMs?: number } = {}): Promise<DeliveryOutcome> {
  const now = deps.clock.now();
  const claimed = await deps.db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: new Date(now.getTime() + LEASE_MS), updated_at: now }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return 'not-due';
  const endpoint = await deps.db
    .selectFrom('webhook_endpoints')
    .select(['url', 'enabled', 'secret_enc'])
    .where('id', '=', claimed.endpoint_id)
    .executeTakeFirst();

  let status: number | null = null;
  let error: string | null = null;
  let detail: string | undefined;
  if (!endpoint) return 'not-due'; // deleted meanwhile: its deliveries went with it
  const disabled = !endpoint.enabled && claimed.event_type !== WEBHOOK_TEST_EVENT;
  if (disabled) {
    error = 'the endpoint is disabled';
  } else {
    try {
      const res = await deps.outbound.request({
        url: endpoint.url,
        method: 'POST',
        timeoutMs: opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        maxBytes: EXCERPT_BYTES,
        truncate: true,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'svc-webhooks/1',
          'x-svc-event': claimed.event_type,
          'x-svc-event-id': claimed.event_id,
          'x-svc-delivery': claimed.id,
          'x-svc-attempt': String(claimed.attempts),
          [SIGNATURE_HEADER.toLowerCase()]: signWebhook(deps.secrets.open(endpoint.secret_enc), claimed.body, deps.clock.now()),
        },
        body: claimed.body,
      });
      status = res.status;
      const excerpt = printable(new TextDecoder('utf-8', { fatal: false }).decode(res.body)).trim();
      if (status < 200 || status > 299) error = bounded(`HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`);
    } catch (err) {
      // The reason alone: the connection-level detail (refused, reset, silent) maps ports, so only the log has it.
      const failure = outboundFailure(err);
      error = failure ? outboundReason(failure) : 'not sent (unexpected error)';
      detail = failure ? failure.detail : String((err as Error)?.message ?? err);
    }
  }

  const done = deps.clock.now();
  const succeeded = error === null;
  const final = succeeded || claimed.attempts >= WEBHOOK_MAX_ATTEMPTS || disabled;
  const wait: number = WEBHOOK_BACKOFF_MS[claimed.attempts - 1] ?? 12 * 3_600_000;
  await deps.db
    .updateTable('webhook_deliveries')
    .set({
      status: succeeded ? 'succeeded' : final ? 'failed' : 'pending',
      last_response_status: status,
      last_error: error,
      next_attempt_at: final ? null : new Date(done.getTime() + wait),
      delivered_at: succeeded ? done : null,
      updated_at: done,
    })
    // Still our attempt (not re-claimed by another worker after the lease).
    .where('id', '=', id)
    .where('attempts', '=', claimed.attempts)
    .execute();
  if (!succeeded)
    deps.log.warn(
      { delivery: id, webhook: claimed.endpoint_id, attempt: claimed.attempts, status, error, detail, final },
      final ? 'webhook delivery failed for good' : 'webhook delivery failed; retried later',
    );
  return succeeded ? 'succeeded' : final ? 'failed' : 'retrying';
}

/**
 * The `webhooks.sweep` job: hands every pending delivery whose next attempt is due to
 * `webhooks.deliver` (retries after their backoff; attempts whose job was lost or whose worker
 * died). Returns how many it handed over.
 */
export async function enqueueDueWebhookDeliveries(deps: Pick<DomainDeps, 'db' | 'clock' | 'jobs'>, limit = 1000): Promise<number> {
  const due = await deps.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'attempts'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', deps.clock.now())
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  // One waiting job per delivery and attempt: sweeps that run while the queue is behind add no copies.
  for (const { id, attempts } of due) await deps.jobs.enqueue(JOBS.webhooksDeliver, { id }, { id: `${id}.${attempts}` });
  return due.length;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const printable = (s: string): string => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f\ufffd]/g, '?');
const bounded = (s: string): string => (s.length > ERROR_MAX ? `${s.slice(0, ERROR_MAX - 1)}…` : s);
