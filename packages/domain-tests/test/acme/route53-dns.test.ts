import { Resolver } from 'node:dns/promises';
import type { DnsProviderPort } from '@svc/domain';
import {
  dnsProviderPort,
  parseRecordSets,
  parseRoute53Error,
  route53TxtDecode,
  route53TxtValue,
  xmlElements,
  xmlText,
} from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type Route53StandIn, startRoute53StandIn } from '@svc/testkit/dns-api-stand-ins';
import { startStandIn } from '@svc/testkit/provider-stand-in';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// DNS-01 through the Route 53 API (issue 16): one record set per name holds every value, so each
// add or remove is a compare-and-swap (DELETE exactly what was read + CREATE the new set, in one
// atomic batch), retried when another writer got in between. The stand-in speaks Route 53's XML,
// checks the SigV4 signature of every request and keeps a real BIND in step.
const HAVE_BIND = bindAvailable();
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
let bind: BindServer;
let r53: Route53StandIn;
beforeAll(async () => {
  if (!HAVE_BIND) return;
  bind = await startBind();
  r53 = await startRoute53StandIn(bind, { accessKeyId: KEY_ID, secretAccessKey: SECRET });
});
afterAll(async () => {
  await r53?.close();
  await bind?.stop();
});

const toBind = async () => '127.0.0.1';
const port = (credentials: Record<string, string> = {}): DnsProviderPort =>
  dnsProviderPort(
    'route53',
    { access_key_id: KEY_ID, secret_access_key: SECRET, region: 'eu-west-1', ...credentials },
    { now: () => new Date(), outbound: testOutbound(), apiBase: r53.base, nameserverPort: bind.port, resolveHost: toBind },
  );
const atBind = async (name: string) => {
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join('')).sort();
};
const posts = (from: number) => r53.requests.slice(from).filter((r) => r.method === 'POST');

describe.skipIf(!HAVE_BIND)('Route 53 DNS-01 adapter (stand-in API over BIND)', () => {
  it('finds the public hosted zone by name (skipping a private zone of the same name), signed for us-east-1/route53', async () => {
    const dns = port();
    const name = `_acme-challenge.find.${bind.zone}`;
    const from = r53.requests.length;
    await dns.addTxt(name, 'found');
    expect(r53.txtSet(name)).toEqual(['"found"']);
    expect(await dns.isVisible(name, 'found')).toBe(true);
    const asked = r53.requests.slice(from);
    expect(asked.filter((r) => r.path.includes('/hostedzonesbyname?'))).toHaveLength(2);
    // Signed for us-east-1 although the account's region is eu-west-1: Route 53 is global.
    for (const r of asked)
      expect(r.headers.authorization).toMatch(/Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/route53\/aws4_request/);
    await dns.removeTxt(name, 'found');
    expect(r53.txtSet(name)).toBeUndefined();
    expect(r53.requests.slice(from).filter((r) => r.path.includes('/hostedzonesbyname?'))).toHaveLength(2);
  });

  it('two values on one name coexist and removing one leaves the other', async () => {
    const dns = port();
    const name = `_acme-challenge.two.${bind.zone}`;
    // At once: both read an empty set, one CREATE loses ("already exists") and is retried.
    await Promise.all([dns.addTxt(name, 'apex-value'), dns.addTxt(name, 'wildcard-value')]);
    expect(await atBind(name)).toEqual(['apex-value', 'wildcard-value']);
    expect(r53.txtSet(name)?.sort()).toEqual(['"apex-value"', '"wildcard-value"']);
    expect(await dns.isVisible(name, 'apex-value')).toBe(true);
    await dns.removeTxt(name, 'apex-value');
    expect(await atBind(name)).toEqual(['wildcard-value']);
    expect(await dns.isVisible(name, 'apex-value')).toBe(false);
    expect(await dns.isVisible(name, 'wildcard-value')).toBe(true);
    // The last value out: the set goes (a DELETE alone).
    const from = r53.requests.length;
    await dns.removeTxt(name, 'wildcard-value');
    expect(await atBind(name)).toEqual([]);
    expect(r53.txtSet(name)).toBeUndefined();
    const [batch] = posts(from);
    expect(xmlElements(batch?.body ?? '', 'Action')).toEqual(['DELETE']);
  });

  it('Route53: a change racing another writer is retried and both values survive', async () => {
    const dns = port();
    const name = `_acme-challenge.race.${bind.zone}`;
    await dns.addTxt(name, 'first');
    const from = r53.requests.length;
    r53.raceAfterNextRead('other-writer');
    await dns.addTxt(name, 'mine');
    expect(posts(from)).toHaveLength(2);
    expect(await atBind(name)).toEqual(['first', 'mine', 'other-writer']);
    // And a removal racing another writer keeps what that writer added.
    r53.raceAfterNextRead('late-writer');
    await dns.removeTxt(name, 'first');
    expect(await atBind(name)).toEqual(['late-writer', 'mine', 'other-writer']);
    for (const v of ['mine', 'other-writer', 'late-writer']) await dns.removeTxt(name, v);
    expect(await atBind(name)).toEqual([]);
  });

  it('adding a value already there and removing one that is gone change nothing', async () => {
    const dns = port();
    const name = `_acme-challenge.again.${bind.zone}`;
    await dns.addTxt(name, 'once');
    const from = r53.requests.length;
    await dns.addTxt(name, 'once');
    await dns.removeTxt(name, 'absent');
    expect(posts(from)).toHaveLength(0);
    await dns.removeTxt(name, 'once');
    await dns.removeTxt(name, 'once');
    expect(await atBind(name)).toEqual([]);
  });

  it('a configured hosted zone id is used without a lookup', async () => {
    const dns = port({ hosted_zone_id: r53.zoneId });
    const name = `_acme-challenge.configured.${bind.zone}`;
    const from = r53.requests.length;
    await dns.addTxt(name, 'direct');
    expect(await dns.isVisible(name, 'direct')).toBe(true);
    await dns.removeTxt(name, 'direct');
    expect(r53.requests.slice(from).some((r) => r.path.includes('hostedzonesbyname'))).toBe(false);
  });

  it("a wrong key is refused with the provider's message, never the key", async () => {
    const wrongSecret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYWRONGKEY';
    const err = await port({ secret_access_key: wrongSecret })
      .addTxt(`_acme-challenge.${bind.zone}`, 'x')
      .catch((e) => e);
    expect(err).toMatchObject({ type: 'unavailable' });
    expect(err.message).toMatch(/Route 53 refused .*HTTP 403.*SignatureDoesNotMatch: The request signature we calculated does not match/);
    expect(err.message).not.toContain(wrongSecret.slice(0, 8));
    const unknown = await port({ access_key_id: 'AKIAUNKNOWNKEY000000' })
      .addTxt(`_acme-challenge.${bind.zone}`, 'x')
      .catch((e) => e);
    expect(unknown.message).toMatch(/InvalidClientTokenId: The security token included in the request is invalid/);
    expect(unknown.message).not.toContain('AKIAUNKNOWNKEY000000');
  });

  it('a name in no public hosted zone is an UnavailableError naming it', async () => {
    await expect(port().addTxt('_acme-challenge.elsewhere.invalid', 'x')).rejects.toMatchObject({
      type: 'unavailable',
      message: expect.stringContaining('no public hosted zone containing _acme-challenge.elsewhere.invalid'),
    });
  });
});

describe('Route 53 DNS-01 adapter: hostile or broken answers', () => {
  const hostile = async (answer: { status: number; text: string }) => {
    const api = await startStandIn();
    api.handle(() => answer);
    try {
      return await dnsProviderPort(
        'route53',
        { access_key_id: KEY_ID, secret_access_key: SECRET, hosted_zone_id: 'Z123' },
        { now: () => new Date(), outbound: testOutbound(), apiBase: api.base },
      )
        .addTxt('_acme-challenge.example.com', 'v')
        .catch((e) => e);
    } finally {
      await api.close();
    }
  };

  it('a hostile/oversized provider answer is an UnavailableError, not a crash', async () => {
    expect(await hostile({ status: 200, text: '<a>'.repeat(800_000) })).toMatchObject({
      type: 'unavailable',
      message: expect.stringMatching(/larger than/),
    });
    // Deeply nested, unclosed, repeated elements: read in linear time, nothing usable in them.
    const nested = `<ResourceRecordSets>${'<ResourceRecordSet><Name>'.repeat(30_000)}`;
    const start = Date.now();
    const err = await hostile({ status: 500, text: nested });
    expect(err).toMatchObject({ type: 'unavailable', retryAfterSeconds: 30 });
    expect(Date.now() - start).toBeLessThan(5000);
    const said = await hostile({
      status: 400,
      text: `<ErrorResponse><Error><Code>Bad\u0000Thing</Code><Message>${SECRET} \u202e${'z'.repeat(3000)}</Message></Error></ErrorResponse>`,
    });
    expect(said.message).toMatch(/^[\x20-\x7e]+$/);
    expect(said.message).not.toContain(SECRET);
    expect(said.message.length).toBeLessThanOrEqual(400);
  });

  it('refusals that mean "try again" are retried a bounded number of times', async () => {
    const api = await startStandIn();
    api.handle((r) =>
      r.method === 'GET'
        ? { status: 200, text: '<ListResourceRecordSetsResponse><ResourceRecordSets/></ListResourceRecordSetsResponse>' }
        : {
            status: 400,
            text: '<InvalidChangeBatch><Messages><Message>Tried to create resource record set but it already exists</Message></Messages></InvalidChangeBatch>',
          },
    );
    try {
      const err = await dnsProviderPort(
        'route53',
        { access_key_id: KEY_ID, secret_access_key: SECRET, hosted_zone_id: 'Z1' },
        { now: () => new Date(), outbound: testOutbound(), apiBase: api.base },
      )
        .addTxt('_acme-challenge.example.com', 'v')
        .catch((e) => e);
      expect(err).toMatchObject({ type: 'unavailable', message: expect.stringMatching(/refused 5 times .*already exists/) });
      expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(5);
    } finally {
      await api.close();
    }
  });
});

describe('Route 53 XML', () => {
  it('TXT values are quoted, escaped and split at 255 bytes, and read back whole', () => {
    expect(route53TxtValue('abc')).toBe('"abc"');
    expect(route53TxtValue('say "hi" \\ ok')).toBe('"say \\"hi\\" \\\\ ok"');
    expect(route53TxtValue('x'.repeat(300))).toBe(`"${'x'.repeat(255)}" "${'x'.repeat(45)}"`);
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 600 }), (v) => route53TxtDecode(route53TxtValue(v)) === v));
  });

  it('reads record sets, errors and text without trusting the input', () => {
    const sets = parseRecordSets(
      '<ResourceRecordSets><ResourceRecordSet><Name>a.example.com.</Name><Type>TXT</Type><TTL>60</TTL><ResourceRecords>' +
        '<ResourceRecord><Value>&quot;v1&quot;</Value></ResourceRecord><ResourceRecord><Value>"v2"</Value></ResourceRecord>' +
        '</ResourceRecords></ResourceRecordSet></ResourceRecordSets>',
    );
    expect(sets).toEqual([
      { name: 'a.example.com.', type: 'TXT', ttl: 60, values: ['"v1"', '"v2"'], setIdentifier: undefined, alias: false },
    ]);
    expect(parseRoute53Error('<InvalidChangeBatch><Messages><Message>a &amp; b</Message></Messages></InvalidChangeBatch>')).toEqual({
      code: 'InvalidChangeBatch',
      message: 'a & b',
    });
    expect(xmlText('<A>&#x41;&#66;&bogus;&</A>', 'A')).toBe('AB&bogus;&');
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        (s) => Array.isArray(parseRecordSets(s)) && typeof parseRoute53Error(s).message === 'string',
      ),
    );
  });
});
