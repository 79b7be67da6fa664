import { oversizedPost } from '@svc/testkit';
import { encodeHostileSegment, hostileText } from '@svc/testkit/hostile-text';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture } from './mail-capture.ts';

// Everything from outside is hostile, on /portal/v1 too: random hostile text in every body
// field, path id and query of the portal's routes never answers >= 500, never logs an error,
// and changes nothing a well-formed request would not; oversized bodies are refused before
// they are decoded.

let p: PortalTestServer;
let mail: MailCapture;
let token = '';
let subscriptionId = '';

beforeAll(async () => {
  p = await startPortal(
    { SVC_PORTAL_REGISTRATION: 'open', SVC_SMTP_URL: 'smtp://127.0.0.1:1' },
    {
      rate_limits: {
        magic_link: { per_ip: { limit: 100_000, window_seconds: 60 }, per_subject: { limit: 100_000, window_seconds: 60 } },
        register: { per_ip: { limit: 100_000, window_seconds: 60 }, per_subject: { limit: 100_000, window_seconds: 60 } },
        login: { per_ip: { limit: 100_000, window_seconds: 60 }, per_subject: { limit: 100_000, window_seconds: 60 } },
        refresh: { per_ip: { limit: 100_000, window_seconds: 60 }, per_subject: { limit: 100_000, window_seconds: 60 } },
      },
    },
  );
  mail = await captureMail(p.s);
  const client = await p.post('/api/v1/clients', { email: 'hostile-portal@example.com' });
  subscriptionId = (await p.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [] })).id;
  await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
  token = (await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(client.email) })).body.access_token;
}, 60_000);
afterAll(async () => {
  await mail?.stop();
  await p?.stop();
});

const BODY_ROUTES = [
  ['/portal/v1/auth/register', (t: string) => ({ email: t, password: t })],
  ['/portal/v1/auth/login', (t: string) => ({ email: t, password: t })],
  ['/portal/v1/auth/magic-link', (t: string) => ({ email: t })],
  ['/portal/v1/auth/callback', (t: string) => ({ token: t })],
  ['/portal/v1/auth/refresh', (t: string) => ({ refresh_token: t })],
] as const;

describe('hostile input on /portal/v1', () => {
  it('random hostile text in bodies, path ids and queries: never >= 500, no error logged, no client created', async () => {
    const { api } = p.s;
    const clientsBefore = await p.s.deps.db.selectFrom('clients').select('id').execute();
    await fc.assert(
      fc.asyncProperty(hostileText({ mega: false }), fc.integer({ min: 0, max: BODY_ROUTES.length + 2 }), async (text, pick) => {
        let res: { status: number; text: string };
        if (pick < BODY_ROUTES.length) {
          const [path, make] = BODY_ROUTES[pick] as (typeof BODY_ROUTES)[number];
          res = await api.post(path, make(text));
        } else if (pick === BODY_ROUTES.length) {
          res = await api.get(`/portal/v1/subscriptions/${encodeHostileSegment(text)}/usage`, { token });
        } else if (pick === BODY_ROUTES.length + 1) {
          res = await api.get(
            `/portal/v1/subscriptions/${subscriptionId}/usage?granularity=${encodeHostileSegment(text)}&from=${encodeHostileSegment(text)}`,
            {
              token,
            },
          );
        } else {
          res = await api.post(`/portal/v1/subscriptions/${encodeHostileSegment(text)}/rotate-credentials`, undefined, { token });
        }
        expect(res.status, res.text.slice(0, 200)).toBeLessThan(500);
        expect(res.status).not.toBe(201);
      }),
      { seed: 1414, numRuns: 200 },
    );
    expect(p.s.logs.filter((l) => l.level >= 50)).toEqual([]);
    expect((await p.s.deps.db.selectFrom('clients').select('id').execute()).length).toBe(clientsBefore.length);
  });

  it('a body over the limit is 413 before it is decoded; not JSON is 415; a wrong shape is 400', async () => {
    const huge = JSON.stringify({ email: `${'a'.repeat(3 * 1024 * 1024)}@example.com`, password: 'x' });
    const big = await oversizedPost(`${p.s.url}/portal/v1/auth/register`, huge);
    expect(big.status).toBe(413);
    const form = await fetch(`${p.s.url}/portal/v1/auth/magic-link`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=a@example.com',
    });
    expect(form.status).toBe(415);
    const array = await p.s.api.post('/portal/v1/auth/callback', [1, 2, 3]);
    expect(array.status).toBe(400);
    const long = await p.s.api.post('/portal/v1/auth/callback', { token: 'x'.repeat(129) });
    expect(long.status).toBe(400);
    expect(long.body.errors).toHaveProperty('token');
  });
});
