import { TEXT_RULE } from '@svc/domain';
import { encodeHostileSegment, hostileText } from '@svc/testkit/hostile-text';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 12.1 and 12.8 on the customer surface: /sub/{token} with text that cannot be stored,
// with undecodable escapes, and the token kept out of the error log.

let portal: PortalTestServer;
let link: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: 'https://vpn.example.com', SVC_SUB_CACHE_SECONDS: '0' });
  const client = await portal.post('/api/v1/clients', { email: 'hostile@example.com' });
  const group = await portal.post('/api/v1/access-groups', { name: 'hostile-g', inbound_ids: [] });
  const sub = await portal.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  link = new URL(sub.link).pathname;
});
// The last test takes the database away; stopping may then fail to close it a second time.
afterAll(() => portal.stop().catch(() => {}));

describe('/sub/{token} with hostile text (issue 12.1)', () => {
  it('a NUL in the token or the query is 400 naming it, never 500', async () => {
    const { api } = portal.s;
    const path = await api.get('/sub/%00');
    expect(path.status).toBe(400);
    expect(path.body.errors).toEqual({ 'path.token': TEXT_RULE });
    const query = await api.get(`${link}?flag=%00`);
    expect(query.status).toBe(400);
    expect(query.body.errors).toEqual({ 'query.flag': TEXT_RULE });
    expect(query.text).not.toContain(link.slice('/sub/'.length));
  });

  it('an escape that does not decode (a lone surrogate in UTF-8, a stray byte) is 404, never 500', async () => {
    for (const bad of ['%ED%A0%80', '%FF', '%C0%80', `${link.slice('/sub/'.length)}%ED%A0%80`]) {
      const res = await portal.s.api.get(`/sub/${bad}`);
      expect(res.status, bad).toBe(404);
    }
    expect(portal.s.logs.filter((l) => l.level >= 50)).toEqual([]);
  });
});

describe('hostile Unicode in every portal route (issue 12, Checked by)', () => {
  it('GET /sub/{token} with random hostile tokens and queries never answers >= 500 and logs no error', async () => {
    const { api } = portal.s;
    const token = link.slice('/sub/'.length);
    await fc.assert(
      fc.asyncProperty(hostileText({ mega: false }), fc.boolean(), async (text, inQuery) => {
        const path = inQuery ? `${link}?q=${encodeHostileSegment(text)}` : `/sub/${encodeHostileSegment(text)}`;
        const res = await api.get(path);
        expect(res.status, `${path.slice(0, 120)} -> ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (text.includes('\u0000')) expect(res.status).toBe(400);
        else if (!inQuery) expect(res.status).toBe(404);
        // A refusal never echoes the link's token.
        if (res.status >= 400) expect(res.text).not.toContain(token);
      }),
      { seed: 1212, numRuns: 150 },
    );
    expect(portal.s.logs.filter((l) => l.level >= 50)).toEqual([]);
  });
});

describe('the error log never holds a subscription token (issue 12.8)', () => {
  it('a 500 on /sub/{token} logs the path as /sub/[redacted]', async () => {
    const { s } = portal;
    // The database goes away under the running server: the lookup fails, the answer is a 500.
    await s.database.destroy();
    const res = await s.api.get(link);
    expect(res.status).toBe(500);
    const errors = s.logs.filter((l) => l.level >= 50);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((l) => l.path)).toContain('/sub/[redacted]');
    const token = link.slice('/sub/'.length);
    expect(JSON.stringify(s.logs)).not.toContain(token);
  });
});
