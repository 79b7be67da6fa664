import { setupOwner, type TestServer } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// POST /dns-providers/{id}/check (spec 4.4: "creates a test TXT record") with an rfc2136 provider
// against Debian's BIND: the record is added, seen at the authoritative server, removed, gone.
const HAVE_BIND = bindAvailable();
let s: TestServer;
let token: string;
let bind: BindServer;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  if (HAVE_BIND) bind = await startBind();
});
afterAll(async () => {
  await bind?.stop();
  await s?.stop();
});

const rfc2136 = (over: Record<string, string> = {}) => ({
  kind: 'rfc2136',
  name: `bind ${Math.random().toString(36).slice(2, 8)}`,
  credentials: { server: '127.0.0.1', port: String(bind.port), key_name: bind.keyName, key_secret: bind.secret, ...over },
});
const check = (id: string, body: unknown) => s.api.post(`/api/v1/dns-providers/${id}/check`, body, { token });

describe.skipIf(!HAVE_BIND)('POST /dns-providers/{id}/check (rfc2136, BIND)', () => {
  it('adds a test TXT record, sees it at the authoritative server, removes it, sees it gone', async () => {
    const created = await s.api.post('/api/v1/dns-providers', rfc2136(), { token });
    expect(created.status, created.text).toBe(201);
    expect(created.body.credentials_set).toEqual(['key_name', 'key_secret', 'port', 'server']);
    expect(created.text).not.toContain(bind.secret);
    const res = await check(created.body.id, { domain: `www.${bind.zone}` });
    expect(res.status, res.text).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.record).toBe(`_svc-check.www.${bind.zone}`);
    expect(res.body.steps.map((x: { step: string; ok: boolean }) => [x.step, x.ok])).toEqual([
      ['add', true],
      ['visible', true],
      ['remove', true],
      ['gone', true],
    ]);
    const audit = await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', created.body.id).execute();
    expect(audit.map((a) => a.action)).toContain('dns_provider.checked');
  });

  it('a wrong key is a report with ok false naming the refusal at the add step; nothing is left behind', async () => {
    const created = await s.api.post('/api/v1/dns-providers', rfc2136({ key_secret: Buffer.alloc(32, 9).toString('base64') }), { token });
    const res = await check(created.body.id, { domain: bind.zone });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(false);
    expect(res.body.steps).toEqual([
      { step: 'add', ok: false, detail: expect.stringMatching(/NOTAUTH \(BADSIG\)/), ms: expect.any(Number) },
    ]);
    expect(res.text).not.toContain(bind.secret);
  });

  it('bad input: a malformed domain or credentials is 400 naming the field; an unknown provider 404', async () => {
    const created = await s.api.post('/api/v1/dns-providers', rfc2136(), { token });
    expect((await check(created.body.id, { domain: 'not a domain' })).status).toBe(400);
    expect((await check(created.body.id, {})).status).toBe(400);
    expect((await check('dns_nothere', { domain: bind.zone })).status).toBe(404);
    const bad = await s.api.post('/api/v1/dns-providers', rfc2136({ port: '70000', key_secret: 'not base64!' }), { token });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['credentials.key_secret', 'credentials.port']);
  });
});
