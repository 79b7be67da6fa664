import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';

/**
 * Where the provider's payment page sends the payer back by default (billing.return_url unset):
 * GET /portal/v1/checkout/return?payment_id=...&outcome=success|canceled. It only says what
 * happens next; nothing here changes a payment (only the provider's webhook, the worker's
 * re-read or an admin do), so a forged visit is harmless. Nothing from the query is echoed:
 * the two texts are fixed. No script.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TEXTS = {
  success: [
    'Thank you',
    'Your payment is being confirmed with the payment provider. Your subscription is extended (or created) as soon as it is: usually within a minute. You can close this page.',
  ],
  canceled: ['Payment not completed', 'Nothing was charged. You can start again from your account whenever you like.'],
} as const;

const page = ([title, text]: readonly [string, string]) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head>
<body>
<main>
<h1>${title}</h1>
<p>${text}</p>
</main>
</body>
</html>
`;

export function registerCheckoutReturnPage(app: OpenAPIHono<AppEnv>): void {
  app.get('/checkout/return', (c) => {
    const outcome = c.req.query('outcome') === 'canceled' ? 'canceled' : 'success';
    c.header('content-security-policy', CSP);
    c.header('cache-control', 'no-store');
    c.header('x-content-type-options', 'nosniff');
    return c.html(page(TEXTS[outcome]));
  });
}
