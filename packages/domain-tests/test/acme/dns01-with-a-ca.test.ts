import { X509Certificate } from 'node:crypto';
import { Agent, get } from 'node:https';
import type { DnsProviderPort } from '@svc/domain';
import { dnsProviderPort } from '@svc/providers';
import { testOutbound, until } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type PebbleServer, pebbleAvailable, startPebble } from '@svc/testkit/pebble-server';
import acme from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// DNS-01 end to end with a real CA (issue 16 item 2): Debian's pebble validates through Debian's
// BIND, whose zone our RFC 2136 adapter changes one value at a time. The apex and the wildcard
// authorization of one name put two values on one record at once; both validate, and both are
// gone afterwards. The ACME protocol is acme-client's (MIT), as the issue asks.
const HAVE = bindAvailable() && pebbleAvailable();
let bind: BindServer;
let pebble: PebbleServer;
let dns: DnsProviderPort;
let agent: Agent;
let interceptor: number | undefined;
beforeAll(async () => {
  if (!HAVE) return;
  bind = await startBind();
  pebble = await startPebble({ dnsPort: bind.port });
  agent = new Agent({ ca: pebble.caPem });
  const origin = new URL(pebble.directoryUrl).origin;
  interceptor = acme.axios.interceptors.request.use((cfg) => {
    if (cfg.url?.startsWith(origin)) cfg.httpsAgent = agent;
    return cfg;
  });
  dns = dnsProviderPort(
    'rfc2136',
    { server: '127.0.0.1', port: String(bind.port), key_name: bind.keyName, key_secret: bind.secret },
    { now: () => new Date(), outbound: testOutbound() },
  );
}, 60_000);
afterAll(async () => {
  // acme-client's axios is one per process: suites that share a process must not inherit this one.
  if (interceptor !== undefined) acme.axios.interceptors.request.eject(interceptor);
  await pebble?.stop();
  await bind?.stop();
});

const txtAt = async (name: string) => {
  const { Resolver } = await import('node:dns/promises');
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join(''));
};

const httpsText = (url: string) =>
  new Promise<string>((resolve, reject) => {
    get(url, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${url}: ${res.statusCode}`))));
    }).on('error', reject);
  });

async function issue(names: string[], publish: boolean): Promise<string> {
  const client = new acme.Client({ directoryUrl: pebble.directoryUrl, accountKey: await acme.crypto.createPrivateEcdsaKey() });
  const [, csr] = await acme.crypto.createCsr({ altNames: names }, await acme.crypto.createPrivateEcdsaKey());
  const created: string[] = [];
  return client.auto({
    csr,
    termsOfServiceAgreed: true,
    challengePriority: ['dns-01'],
    skipChallengeVerification: true,
    challengeCreateFn: async (authz, _challenge, value) => {
      const fqdn = `_acme-challenge.${authz.identifier.value}`;
      if (!publish) return;
      await dns.addTxt(fqdn, value);
      created.push(value);
      await until(`${value} visible`, () => dns.isVisible(fqdn, value), 10_000);
    },
    challengeRemoveFn: async (authz, _challenge, value) => {
      if (created.includes(value)) await dns.removeTxt(`_acme-challenge.${authz.identifier.value}`, value);
    },
  });
}

describe.skipIf(!HAVE)('DNS-01 through RFC 2136 with a real CA (pebble + BIND)', () => {
  it('an apex and a wildcard of one name validate at once from two values on one record; both are removed after', async () => {
    const name = `svc.${bind.zone}`;
    const chain = await issue([name, `*.${name}`], true);
    const [leafPem] = acme.crypto.splitPemChain(chain);
    const leaf = new X509Certificate(leafPem as string);
    expect(leaf.subjectAltName).toContain(`DNS:${name}`);
    expect(leaf.subjectAltName).toContain(`DNS:*.${name}`);
    // The chain builds: leaf <- intermediate <- pebble's root (from its management API).
    const intermediate = new X509Certificate(acme.crypto.splitPemChain(chain)[1] as string);
    const root = new X509Certificate(await httpsText(`${pebble.managementUrl}/roots/0`));
    expect(leaf.checkIssued(intermediate)).toBe(true);
    expect(leaf.verify(intermediate.publicKey)).toBe(true);
    expect(intermediate.verify(root.publicKey)).toBe(true);
    expect(await txtAt(`_acme-challenge.${name}`)).toEqual([]);
  });

  it('a value that never reached DNS fails the order with the CA saying so', async () => {
    const err = await issue([`missing.${bind.zone}`], false).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toMatch(/DNS|TXT|challenge/i);
  });
});
