import { TOPICS, withActor } from '@svc/domain';
import { fixtures, login, OWNER, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 12.8: a PATCH that changes nothing (`{}`, or every field re-sent with its value) is no
// change: no node revision moves, nothing is announced, no audit entry claims a change. Every
// PATCH route of the OpenAPI document is tried, on resources wired to nodes (a certificate
// behind a profile behind an inbound in a group granted to a subscription, a chain through
// two nodes), so a bump anywhere would show.

let s: TestServer;
let token: string;
/** The id each PATCH path template is tried with; a PATCH route missing here fails the test. */
const ids: Record<string, string> = {};
const announced: unknown[] = [];

beforeAll(async () => {
  s = await startAdminApi();
  await setupOwner(s);
  token = (await login(s, OWNER.email, OWNER.password)).access_token;
  const f = fixtures(withActor(s.deps, TEST_OWNER));
  const certificate = await f.certificate();
  const profile = await f.profile({
    protocol: 'trojan',
    stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certificate.id } },
  });
  const chain = await f.chain();
  const entry = chain.hops[0]?.node_id as string;
  const inbound = await f.inbound({ node_id: entry, profile_id: profile.id, chain_id: chain.id });
  const group = await f.accessGroup({ inbound_ids: [inbound.id] });
  const client = await f.client();
  const subscription = await f.subscription({ client_id: client.id, access_group_ids: [group.id] });
  Object.assign(ids, {
    '/api/v1/nodes/{id}': entry,
    '/api/v1/inbounds/{id}': inbound.id,
    '/api/v1/inbound-profiles/{id}': profile.id,
    '/api/v1/access-groups/{id}': group.id,
    '/api/v1/chains/{id}': chain.id,
    '/api/v1/certificates/{id}': certificate.id,
    '/api/v1/clients/{id}': client.id,
    '/api/v1/subscriptions/{id}': subscription.id,
    '/api/v1/plans/{id}': (await f.plan({ access_group_ids: [group.id] })).id,
    '/api/v1/payment-providers/{id}': (await f.paymentProvider()).id,
    '/api/v1/dns-providers/{id}': (await f.dnsProvider()).id,
    '/api/v1/admins/{id}': (await f.admin()).id,
    '/api/v1/settings/subscription-link': '',
    '/api/v1/settings/outbound': '',
    '/api/v1/settings/customer-pages': '',
    '/api/v1/webhooks/{id}': (
      await s.api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/svc', event_types: ['client.registered'] }, { token })
    ).body.id,
  });
  for (const topic of [TOPICS.nodesChanged, TOPICS.subscriptionsChanged, TOPICS.settingsChanged])
    await s.deps.bus.subscribe(topic, (m) => announced.push({ topic, m }));
});
afterAll(() => s.stop());

const revisions = async () =>
  (await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).orderBy('id').execute()).map((r) => [
    r.id,
    Number(r.desired_revision),
  ]);
const auditCount = async () =>
  Number(
    (
      await s.deps.db
        .selectFrom('audit_log')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('a PATCH that changes nothing changes nothing (issue 12.8)', () => {
  it('PATCH {} on every PATCH route of the OpenAPI document: 200, no node revision moves, nothing announced, no audit entry', async () => {
    const doc = (await s.api.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const patches = Object.entries(doc.paths)
      .filter(([, ops]) => 'patch' in ops)
      .map(([path]) => path);
    expect(patches.length).toBeGreaterThan(10);
    expect(patches.filter((p) => !(p in ids))).toEqual([]);
    const changed: unknown[] = [];
    for (const path of patches) {
      const before = { revisions: await revisions(), audit: await auditCount() };
      announced.length = 0;
      const res = await s.api.patch(path.replace('{id}', ids[path] as string), {}, { token });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      // Announcements are published after commit, before the answer.
      const after = { revisions: await revisions(), audit: await auditCount() };
      const moved = after.revisions.filter(([id, rev]) => before.revisions.find((b) => b[0] === id)?.[1] !== rev);
      if (moved.length > 0 || after.audit !== before.audit || announced.length > 0)
        changed.push({ path, moved, audit_entries: after.audit - before.audit, announced: [...announced] });
    }
    expect(changed).toEqual([]);
  });

  it('PATCH re-sending the values as they are (read back with GET) on every PATCH route: no node revision moves', async () => {
    type Schema = { $ref?: string; properties?: Record<string, unknown> };
    const doc = (await s.api.get('/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
      components: { schemas: Record<string, Schema> };
    };
    const resolve = (schema: Schema): Schema =>
      schema.$ref ? (doc.components.schemas[schema.$ref.split('/').at(-1) as string] as Schema) : schema;
    const moved: unknown[] = [];
    let resent = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      const op = ops.patch;
      if (!op) continue;
      const url = path.replace('{id}', ids[path] as string);
      const fields = Object.keys(resolve(op.requestBody?.content['application/json']?.schema ?? {}).properties ?? {});
      const view = (await s.api.get(url, { token })).body as Record<string, unknown>;
      const body = Object.fromEntries(fields.filter((f) => f in view).map((f) => [f, view[f]]));
      const before = await revisions();
      const res = await s.api.patch(url, body, { token });
      if (res.status === 200) resent += Object.keys(body).length;
      else {
        // Some fields are read back in another form than they are written (a REALITY public key
        // in the stream) or only with another (a certificate with its key): each alone, where accepted.
        expect(res.status, `${path}: ${res.text}`).toBe(400);
        for (const [k, v] of Object.entries(body)) if ((await s.api.patch(url, { [k]: v }, { token })).status === 200) resent++;
      }
      const after = await revisions();
      if (JSON.stringify(after) !== JSON.stringify(before)) moved.push({ path, body, before, after });
    }
    expect(resent).toBeGreaterThan(20);
    expect(moved).toEqual([]);
  });
});
