import { Resolver } from 'node:dns/promises';
import type { DnsProviderPort } from '@svc/domain';
import { dnsProviderPort, relativeName } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type DigitalOceanStandIn, startDigitalOceanStandIn } from '@svc/testkit/dns-api-stand-ins';
import { startStandIn } from '@svc/testkit/provider-stand-in';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// DNS-01 through the DigitalOcean API (issue 16): one record per value, named relative to the
// domain. The stand-in speaks DigitalOcean's v2 JSON and keeps a real BIND in step, so
// visibility is asked of a real name server (the domain's NS records name it).
const HAVE_BIND = bindAvailable();
const TOKEN = 'dop_v1_0123456789abcdef0123456789abcdef';
let bind: BindServer;
let api: DigitalOceanStandIn;
beforeAll(async () => {
  if (!HAVE_BIND) return;
  bind = await startBind();
  api = await startDigitalOceanStandIn(bind, { token: TOKEN });
});
afterAll(async () => {
  await api?.close();
  await bind?.stop();
});

const toBind = async () => '127.0.0.1';
const port = (token = TOKEN): DnsProviderPort =>
  dnsProviderPort(
    'digitalocean',
    { api_token: token },
    { now: () => new Date(), outbound: testOutbound(), apiBase: api.base, nameserverPort: bind.port, resolveHost: toBind },
  );
const atBind = async (name: string) => {
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join('')).sort();
};

describe.skipIf(!HAVE_BIND)('DigitalOcean DNS-01 adapter (stand-in API over BIND)', () => {
  it('finds the domain by walking up from the name and adds a record named relative to it', async () => {
    const dns = port();
    const name = `_acme-challenge.www.${bind.zone}`;
    const from = api.requests.length;
    await dns.addTxt(name, 'walked');
    const asked = api.requests.slice(from);
    expect(asked.filter((r) => r.method === 'GET' && !r.path.includes('/records')).map((r) => r.path)).toEqual([
      `/v2/domains/www.${bind.zone}`,
      `/v2/domains/${bind.zone}`,
    ]);
    const post = asked.find((r) => r.method === 'POST');
    expect(JSON.parse(post?.body ?? '{}')).toEqual({ type: 'TXT', name: '_acme-challenge.www', data: 'walked', ttl: 60 });
    expect(await dns.isVisible(name, 'walked')).toBe(true);
    await dns.removeTxt(name, 'walked');
    expect(api.requests.slice(from).filter((r) => r.method === 'GET' && !r.path.includes('/records'))).toHaveLength(2);
  });

  it('two values on one name coexist and removing one leaves the other', async () => {
    const dns = port();
    const name = `_acme-challenge.two.${bind.zone}`;
    await Promise.all([dns.addTxt(name, 'apex-value'), dns.addTxt(name, 'wildcard-value')]);
    expect(await atBind(name)).toEqual(['apex-value', 'wildcard-value']);
    expect(await dns.isVisible(name, 'apex-value')).toBe(true);
    expect(await dns.isVisible(name, 'wildcard-value')).toBe(true);
    await dns.removeTxt(name, 'apex-value');
    expect(await atBind(name)).toEqual(['wildcard-value']);
    expect(await dns.isVisible(name, 'apex-value')).toBe(false);
    expect(await dns.isVisible(name, 'wildcard-value')).toBe(true);
    await dns.removeTxt(name, 'wildcard-value');
    expect(await atBind(name)).toEqual([]);
  });

  it('adding a value already there adds no duplicate, removing one that is gone is fine', async () => {
    const dns = port();
    const name = `_acme-challenge.again.${bind.zone}`;
    await dns.addTxt(name, 'once');
    const from = api.requests.length;
    await dns.addTxt(name, 'once');
    expect(api.requests.slice(from).some((r) => r.method === 'POST')).toBe(false);
    await dns.removeTxt(name, 'once');
    await dns.removeTxt(name, 'once');
    expect(await atBind(name)).toEqual([]);
  });

  it('a record at the apex is named @; one stored by someone else stays', async () => {
    const dns = port();
    await api.seed('@', 'not-ours');
    await dns.addTxt(bind.zone, 'at-apex');
    expect(await atBind(bind.zone)).toEqual(['at-apex', 'not-ours']);
    await dns.removeTxt(bind.zone, 'at-apex');
    expect(await atBind(bind.zone)).toEqual(['not-ours']);
    expect(relativeName('example.com', 'example.com')).toBe('@');
    expect(relativeName('_acme-challenge.a.example.com', 'example.com')).toBe('_acme-challenge.a');
  });

  it("a wrong token is refused with the provider's message, never the token", async () => {
    const wrong = 'dop_v1_ffffffffffffffffffffffffffffffff';
    const err = await port(wrong)
      .addTxt(`_acme-challenge.${bind.zone}`, 'x')
      .catch((e) => e);
    expect(err).toMatchObject({ type: 'unavailable' });
    expect(err.message).toMatch(/DigitalOcean refused .*HTTP 401.*Unable to authenticate you \(Unauthorized\)/);
    expect(err.message).not.toContain(wrong);
  });

  it('a name in no domain of the account is an UnavailableError naming it', async () => {
    await expect(port().addTxt('_acme-challenge.elsewhere.invalid', 'x')).rejects.toMatchObject({
      type: 'unavailable',
      message: expect.stringContaining('no domain containing _acme-challenge.elsewhere.invalid'),
    });
  });
});

describe('DigitalOcean DNS-01 adapter: hostile or broken answers', () => {
  const hostile = async (answer: { status: number; json?: unknown; text?: string }) => {
    const stand = await startStandIn();
    stand.handle(() => answer);
    try {
      return await dnsProviderPort(
        'digitalocean',
        { api_token: TOKEN },
        { now: () => new Date(), outbound: testOutbound(), apiBase: stand.base },
      )
        .addTxt('_acme-challenge.example.com', 'v')
        .catch((e) => e);
    } finally {
      await stand.close();
    }
  };

  it('a hostile/oversized provider answer is an UnavailableError, not a crash', async () => {
    expect(await hostile({ status: 200, text: 'x'.repeat(3 * 1024 * 1024) })).toMatchObject({
      type: 'unavailable',
      message: expect.stringMatching(/larger than/),
    });
    expect(await hostile({ status: 200, text: '<html>' })).toMatchObject({
      type: 'unavailable',
      message: expect.stringMatching(/not JSON/),
    });
    expect(await hostile({ status: 503, text: '<html>down</html>' })).toMatchObject({ type: 'unavailable', retryAfterSeconds: 30 });
    expect(await hostile({ status: 429, json: { id: 'too_many_requests', message: 'API Rate limit exceeded.' } })).toMatchObject({
      type: 'unavailable',
      message: expect.stringMatching(/HTTP 429.*API Rate limit exceeded/),
    });
    const echoed = await hostile({ status: 403, json: { id: 'forbidden', message: `token ${TOKEN}\u0007\u202e` } });
    expect(echoed.message).toMatch(/^[\x20-\x7e]+$/);
    expect(echoed.message).not.toContain(TOKEN);
  });
});
