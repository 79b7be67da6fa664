import { Resolver } from 'node:dns/promises';
import type { DnsProviderPort } from '@svc/domain';
import { dnsProviderPort, visibleAtNameservers } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type CloudflareStandIn, startCloudflareStandIn } from '@svc/testkit/dns-api-stand-ins';
import { downAddress, startStandIn } from '@svc/testkit/provider-stand-in';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// DNS-01 through the Cloudflare API (issue 16): one record per value, so the apex and the
// wildcard challenge of one name each add and remove their own. The stand-in speaks Cloudflare's
// v4 envelope and keeps a real BIND in step, so visibility is asked of a real name server.
const HAVE_BIND = bindAvailable();
const TOKEN = 'cf-token-0123456789abcdefghijklmnop';
let bind: BindServer;
let cf: CloudflareStandIn;
beforeAll(async () => {
  if (!HAVE_BIND) return;
  bind = await startBind();
  cf = await startCloudflareStandIn(bind, { token: TOKEN });
});
afterAll(async () => {
  await cf?.close();
  await bind?.stop();
});

const toBind = async () => '127.0.0.1';
const port = (token = TOKEN, apiBase = cf.base): DnsProviderPort =>
  dnsProviderPort(
    'cloudflare',
    { api_token: token },
    { now: () => new Date(), outbound: testOutbound(), apiBase, nameserverPort: bind.port, resolveHost: toBind },
  );
const atBind = async (name: string) => {
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join('')).sort();
};

describe.skipIf(!HAVE_BIND)('Cloudflare DNS-01 adapter (stand-in API over BIND)', () => {
  it('finds the zone by walking up from the name, once per port', async () => {
    const dns = port();
    const name = `_acme-challenge.deep.svc.${bind.zone}`;
    const from = cf.requests.length;
    await dns.addTxt(name, 'walk');
    const lookups = cf.requests.slice(from).filter((r) => r.path.startsWith('/client/v4/zones?'));
    // `_acme-challenge.…` itself is no zone name: not asked.
    expect(lookups.map((r) => new URL(r.path, 'http://x').searchParams.get('name'))).toEqual([
      `deep.svc.${bind.zone}`,
      `svc.${bind.zone}`,
      bind.zone,
    ]);
    await dns.removeTxt(name, 'walk');
    expect(cf.requests.slice(from).filter((r) => r.path.startsWith('/client/v4/zones?'))).toHaveLength(3);
    expect(cf.requests.slice(from).every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
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

  it('adding a value already there is fine (81058), and so is removing one that is gone', async () => {
    const dns = port();
    const name = `_acme-challenge.again.${bind.zone}`;
    await dns.addTxt(name, 'once');
    await dns.addTxt(name, 'once');
    expect(await atBind(name)).toEqual(['once']);
    await dns.removeTxt(name, 'once');
    await dns.removeTxt(name, 'once');
    expect(await atBind(name)).toEqual([]);
  });

  it('a value stored with surrounding quotes (by another tool) is the same value', async () => {
    const dns = port();
    const name = `_acme-challenge.quoted.${bind.zone}`;
    await cf.seed(name, '"quoted-value"');
    await cf.seed(name, 'someone-else');
    await dns.addTxt(name, 'quoted-value');
    expect(await atBind(name)).toEqual(['quoted-value', 'someone-else']);
    await dns.removeTxt(name, 'quoted-value');
    expect(await atBind(name)).toEqual(['someone-else']);
  });

  it("a wrong token is refused with the provider's message, never the token", async () => {
    const wrong = 'cf-wrong-token-abcdefghijklmnopqrstuv';
    const err = await port(wrong)
      .addTxt(`_acme-challenge.${bind.zone}`, 'x')
      .catch((e) => e);
    expect(err).toMatchObject({ type: 'unavailable' });
    expect(err.message).toMatch(/Cloudflare refused .*HTTP 403.*Authentication error \(10000\)/);
    expect(err.message).not.toContain(wrong);
    expect(err.message).not.toContain(wrong.slice(0, 8));
  });

  it('a name in no zone of the account is an UnavailableError naming it', async () => {
    await expect(port().addTxt('_acme-challenge.elsewhere.invalid', 'x')).rejects.toMatchObject({
      type: 'unavailable',
      message: expect.stringContaining('no zone containing _acme-challenge.elsewhere.invalid'),
    });
  });

  it('visible only when every name server answers the value (the CA may ask any)', async () => {
    const dns = port();
    const name = `_acme-challenge.every.${bind.zone}`;
    await dns.addTxt(name, 'everywhere');
    const ns = cf.nameservers;
    expect(ns).toHaveLength(2);
    const reach = (ns2: string) => ({
      outbound: testOutbound(),
      nameserverPort: bind.port,
      resolveHost: async (h: string) => (h === ns[1] ? ns2 : '127.0.0.1'),
    });
    expect(await visibleAtNameservers(ns, name, 'everywhere', reach('127.0.0.1'))).toBe(true);
    // The second name server is somewhere that does not answer: not visible.
    expect(await visibleAtNameservers(ns, name, 'everywhere', reach('127.0.0.2'))).toBe(false);
    // Or it cannot be resolved at all.
    const unresolved = {
      outbound: testOutbound(),
      nameserverPort: bind.port,
      resolveHost: async (h: string) => (h === ns[1] ? Promise.reject(new Error('ENOTFOUND')) : '127.0.0.1'),
    };
    expect(await visibleAtNameservers(ns, name, 'everywhere', unresolved)).toBe(false);
    // Without a resolveHost seam a name server's name is resolved by the outbound client, under its policy.
    expect(await visibleAtNameservers(['localhost'], name, 'everywhere', { outbound: testOutbound(), nameserverPort: bind.port })).toBe(
      true,
    );
    const strict = testOutbound({ allowPrivateNetworks: false });
    expect(await visibleAtNameservers(['localhost'], name, 'everywhere', { outbound: strict, nameserverPort: bind.port })).toBe(false);
    // A seam's address is checked too: a delegation to a metadata address is never asked.
    const metadata = { outbound: testOutbound(), nameserverPort: bind.port, resolveHost: async () => '169.254.169.254' };
    expect(await visibleAtNameservers(['ns.example.com'], name, 'everywhere', metadata)).toBe(false);
    expect(await visibleAtNameservers([], name, 'everywhere', reach('127.0.0.1'))).toBe(false);
    expect(await visibleAtNameservers(['not a host!'], name, 'everywhere', reach('127.0.0.1'))).toBe(false);
    await dns.removeTxt(name, 'everywhere');
  });

  it('a provider that turns bad after the zone was found is an UnavailableError, not a crash', async () => {
    const dns = port();
    const name = `_acme-challenge.bad.${bind.zone}`;
    await dns.addTxt(name, 'v');
    try {
      cf.answerWith({ status: 502, body: '<html>Bad gateway</html>', contentType: 'text/html' });
      const err = await dns.removeTxt(name, 'v').catch((e) => e);
      expect(err).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/HTTP 502.*not JSON/) });
    } finally {
      cf.answerWith(null);
    }
    await dns.removeTxt(name, 'v');
  });
});

describe('Cloudflare DNS-01 adapter: hostile or broken answers', () => {
  const hostile = async (answer: { status: number; json?: unknown; text?: string }) => {
    const api = await startStandIn();
    api.handle(() => answer);
    try {
      return await dnsProviderPort(
        'cloudflare',
        { api_token: TOKEN },
        { now: () => new Date(), outbound: testOutbound(), apiBase: api.base },
      )
        .addTxt('_acme-challenge.example.com', 'v')
        .catch((e) => e);
    } finally {
      await api.close();
    }
  };

  it('a hostile/oversized provider answer is an UnavailableError, not a crash', async () => {
    const big = await hostile({ status: 200, text: 'x'.repeat(2 * 1024 * 1024) });
    expect(big).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/larger than/) });
    const notJson = await hostile({ status: 200, text: '{"success":tru' });
    expect(notJson).toMatchObject({ type: 'unavailable' });
    const wrongShape = await hostile({ status: 200, json: { success: true, result: 'zones' } });
    expect(wrongShape).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/cannot read/) });
    const badId = await hostile({ status: 200, json: { success: true, result: [{ id: '../../accounts', name: 'example.com' }] } });
    expect(badId).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/zone id we cannot use/) });
    const serverError = await hostile({ status: 500, json: null });
    expect(serverError).toMatchObject({ type: 'unavailable', retryAfterSeconds: 30 });
  });

  it('what the provider says is shown printable, bounded and without the token', async () => {
    const message = `\u0000\u202e\x1b[31m echo ${TOKEN} ${'y'.repeat(5000)}`;
    const err = await hostile({ status: 400, json: { success: false, errors: [{ code: 1, message }] } });
    expect(err).toMatchObject({ type: 'unavailable' });
    expect(err.message).toMatch(/^[\x20-\x7e]+$/);
    expect(err.message.length).toBeLessThanOrEqual(400);
    expect(err.message).not.toContain(TOKEN);
    expect(err.message).toContain('[redacted]');
  });

  it('an API that is not there is an UnavailableError saying "not reachable", never the connection-level detail', async () => {
    const err = await dnsProviderPort(
      'cloudflare',
      { api_token: TOKEN },
      { now: () => new Date(), outbound: testOutbound(), apiBase: await downAddress() },
    )
      .addTxt('_acme-challenge.example.com', 'v')
      .catch((e) => e);
    expect(err).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/^Cloudflare \(.*\): not reachable$/) });
    expect(err.message).not.toMatch(/ECONNREFUSED|refused|closed/i);
  });

  it('a provider without its credential is not configured, said so', () => {
    expect(() => dnsProviderPort('cloudflare', {}, { now: () => new Date(), outbound: testOutbound() })).toThrow(/api_token is not set/);
  });
});
