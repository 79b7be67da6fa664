import { recordAppliedRevisions } from '@svc/domain';
import { adminWithRole, fixtures, openEventStream, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

/**
 * GET /api/v1/events (issue 30.5) over real HTTP: scoped and role-checked like any admin route,
 * it carries what changed (entity types, node ids), never a record, and ends at the token's expiry.
 */
let s: TestServer;
let owner: string;
beforeAll(async () => {
  s = await startAdminApi();
  owner = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

describe('GET /api/v1/events', () => {
  it('refuses a caller without an admin token (401 problem), before any stream opens', async () => {
    const none = await openEventStream(`${s.url}/api/v1/events`);
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    const forged = await openEventStream(`${s.url}/api/v1/events`, { token: 'not-a-token' });
    expect(forged.status).toBe(401);
  });

  it('tells a viewer which lists changed when an admin writes (entity types only, no record)', async () => {
    const viewer = await adminWithRole(s, owner, 'viewer');
    const stream = await openEventStream(`${s.url}/api/v1/events`, { token: viewer.access_token });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      await stream.waitFor((e) => e.some((x) => x.event === 'ready'));
      const created = await s.api.post('/api/v1/clients', { email: 'events-client@example.com', note: 'secret note' }, { token: owner });
      expect(created.status).toBe(201);
      await stream.waitFor((e) => e.some((x) => x.event === 'changed' && JSON.parse(x.data).entities.includes('client')));
      const all = stream.events.map((e) => e.data).join('\n');
      expect(all).not.toContain('events-client@example.com');
      expect(all).not.toContain('secret note');
    } finally {
      await stream.close();
    }
  });

  it('names the nodes whose view changed (an applied revision), gathered into one event', async () => {
    const nodes = await Promise.all([1, 2, 3].map((i) => fixtures(s.deps as never).node({ name: `events-node-${i}` })));
    const stream = await openEventStream(`${s.url}/api/v1/events`, { token: owner });
    try {
      await stream.waitFor((e) => e.some((x) => x.event === 'ready'));
      for (const n of nodes) await recordAppliedRevisions(s.deps, [{ node_id: n.id, revision: n.desired_revision }]);
      await stream.waitFor((e) => {
        const ids = e.filter((x) => x.event === 'nodes').flatMap((x) => JSON.parse(x.data).ids as string[]);
        return nodes.every((n) => ids.includes(n.id));
      });
      expect(stream.events.filter((x) => x.event === 'nodes').length).toBeLessThan(nodes.length);
    } finally {
      await stream.close();
    }
  });
});

describe('GET /api/v1/events with short-lived access tokens', () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startAdminApi({ config: { auth: { access_token_ttl_seconds: 2 } } });
  });
  afterAll(() => short.stop());

  it("ends when the access token expires (a revoked or demoted admin stops hearing within the token's lifetime)", async () => {
    const token = (await setupOwner(short)).access_token;
    const stream = await openEventStream(`${short.url}/api/v1/events`, { token });
    await stream.waitFor((e) => e.some((x) => x.event === 'ready'));
    const ended = await Promise.race([stream.done.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 8_000))]);
    expect(ended).toBe('ended');
  });
});
