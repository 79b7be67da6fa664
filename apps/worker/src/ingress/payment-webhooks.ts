import type { OpenAPIHono } from '@hono/zod-openapi';
import { receivePaymentWebhook, SYSTEM, WEBHOOK_MAX_BYTES, withActor } from '@svc/domain';
import { type AppEnv, limitBody, problemResponse } from '@svc/http';

/**
 * The worker's HTTP ingress: POST /webhooks/payments/{provider} (spec 4.5), `{provider}` the
 * id of a stored payment provider (GET /api/v1/payment-providers/{id} shows its webhook_url).
 * The body is limited to WEBHOOK_MAX_BYTES before anything reads it and handed to the
 * provider's adapter as raw bytes (signatures cover the bytes, not a re-encoding).
 * - verified: 200 {received: stored | duplicate | ignored} (a replay is stored once);
 * - refused (bad or missing signature, stale, not from an allowed address, not a body we read):
 *   400 problem, nothing stored;
 * - unknown, disabled or manual provider: 404;
 * - a re-read the adapter needs fails (YooKassa): 503, so the provider sends it again.
 * Not under /api or /portal: no token; the adapter's check is the authentication.
 */
export function registerPaymentWebhooks(app: OpenAPIHono<AppEnv>): void {
  app.use('/webhooks/payments/*', limitBody(WEBHOOK_MAX_BYTES));
  app.post('/webhooks/payments/:provider', async (c) => {
    const provider = c.req.param('provider');
    if (provider.length === 0 || provider.length > 64) return problemResponse(c, 'route-not-found', 'no such payment provider');
    const raw = Buffer.from(await c.req.arrayBuffer());
    if (raw.length > WEBHOOK_MAX_BYTES)
      return problemResponse(c, 'payload-too-large', `the request body exceeds ${WEBHOOK_MAX_BYTES} bytes`);
    const receipt = await receivePaymentWebhook(withActor(c.get('deps'), { ...SYSTEM, ip: c.get('clientIp') }), provider, {
      rawBody: raw,
      headers: c.req.raw.headers,
      sourceIp: c.get('clientIp') ?? '',
    });
    return c.json(receipt, 200);
  });
}
