import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CheckDnsProviderInput,
  CreateAcmeAccountInput,
  CreateCertificateInput,
  CreateDnsProviderInput,
  checkDnsProvider,
  createAcmeAccount,
  createCertificate,
  createDnsProvider,
  getAcmeAccount,
  issueAcmeCertificate,
  PRIVATE_NETWORKS_SETTING,
  parseInput,
  registerAcmeAccount,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { type AcmeDirectoryStandIn, startAcmeDirectoryStandIn } from '@svc/testkit/acme-directory-stand-in';
import acme from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ACME directories and DNS servers under the outbound policy (issue 29.2; docs/certificates.md,
// "Where the server connects"), at the verbs: refused destinations in every spelling, https
// for every URL a directory names (refused before any request is made to it), redirects
// within the origin, a deadline per registration.
let bed: DomainTestbed;
let dir: AcmeDirectoryStandIn;
beforeAll(async () => {
  dir = await startAcmeDirectoryStandIn();
  const caFile = join(tmpdir(), `svc-acme-outbound-ca-${process.pid}.pem`);
  writeFileSync(caFile, dir.caPem);
  bed = await createDomainTestbed({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '', SVC_ACME_EXTRA_CA_FILE: caFile } });
}, 60_000);
afterAll(async () => {
  await bed?.close();
  await dir?.close();
});

const allowPrivate = (value: boolean) =>
  bed.deps.db
    .insertInto('settings')
    .values({ key: 'outbound', value: JSON.stringify({ allow_private_networks: value }), updated_at: new Date() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify({ allow_private_networks: value }) }))
    .execute();
let n = 0;
/** A registration attempt of a new account at `directoryUrl`: its registration_error, and how long it took. */
async function register(directoryUrl: string, opts: { deadlineMs?: number; requestTimeoutMs?: number } = {}) {
  const { id } = await createAcmeAccount(
    bed.ctx(),
    parseInput(CreateAcmeAccountInput, { email: `a${++n}@example.com`, directory_url: directoryUrl }),
  );
  const started = Date.now();
  await registerAcmeAccount(bed.ctx(), id, opts).catch(() => {});
  return { error: (await getAcmeAccount(bed.ctx(), id)).registration_error, ms: Date.now() - started };
}
const LOOPBACK = `the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`;

describe('ACME directories under the outbound policy', () => {
  it('a directory at a metadata address, in any spelling, is refused whatever the setting; loopback until private networks are allowed', async () => {
    for (const allowed of [false, true]) {
      await allowPrivate(allowed);
      for (const url of [
        'https://169.254.169.254/directory',
        'https://[::ffff:169.254.169.254]/directory',
        'https://2852039166/directory',
      ]) {
        const { error } = await register(url);
        expect(error, url).toBe(`the ACME CA (${new URL(url).href}): the destination is refused: a link-local address, never allowed`);
      }
    }
    await allowPrivate(false);
    const seen = dir.seen.length;
    for (const url of [`https://0x7f.0.0.1:${dir.port}/http-nonce/directory`, `https://localhost:${dir.port}/http-nonce/directory`]) {
      const { error } = await register(url);
      expect(error, url).toBe(`the ACME CA (${new URL(url).href}): ${LOOPBACK}`);
    }
    expect(dir.seen.length).toBe(seen);
    // Allowed: the same directories are asked (and then refused for what they name, below).
    await allowPrivate(true);
    for (const url of [`https://0x7f.0.0.1:${dir.port}/http-nonce/directory`, `https://localhost:${dir.port}/http-nonce/directory`])
      expect((await register(url)).error, url).toMatch(/names newNonce at a URL that is not https/);
    expect(dir.seen.length).toBe(seen + 2);
  });

  it('a directory naming an http newNonce is refused without a request to it', async () => {
    await allowPrivate(true);
    const { error } = await register(`${dir.base}/http-nonce/directory`);
    expect(error).toBe(
      `the ACME directory ${dir.base}/http-nonce/directory names newNonce at a URL that is not https: refused, no request made to it`,
    );
    expect(dir.httpSeen).toEqual([]);
  });

  it('a redirect to http (the directory itself, or its newNonce) is refused without a request to it; a redirect to another origin too', async () => {
    await allowPrivate(true);
    expect((await register(`${dir.base}/redirect-to-http/directory`)).error).toMatch(
      /: the destination is refused: only https is allowed$/,
    );
    expect((await register(`${dir.base}/nonce-redirects/directory`)).error).toMatch(/: the destination is refused: only https is allowed$/);
    expect(dir.seen).toContain('HEAD /nonce-redirects/nonce');
    expect(dir.httpSeen).toEqual([]);
    const before = dir.seen.length;
    expect((await register(`${dir.base}/cross-origin/directory`)).error).toMatch(
      /: a redirect was refused \(to another origin, or too many\)$/,
    );
    expect(dir.seen.slice(before)).toEqual(['GET /cross-origin/directory']);
  });

  it('a newNonce that never answers: the registration gives up at its deadline with that as its error', async () => {
    await allowPrivate(true);
    const { error, ms } = await register(`${dir.base}/tarpit/directory`, { deadlineMs: 1500, requestTimeoutMs: 30_000 });
    expect(error).toBe(`gave up after 2 s: the ACME CA (${dir.base}/tarpit/directory) did not finish in time`);
    expect(ms).toBeLessThan(4000);
    expect(dir.seen).toContain('HEAD /tarpit/nonce');
  });

  it('an issuance whose CA stops answering after the account was registered gives up at its deadline: failed, the slot free, the deadline as the error', async () => {
    await allowPrivate(true);
    const directoryUrl = `${dir.base}/tarpit/directory`;
    const { id: accountId } = await createAcmeAccount(
      bed.ctx(),
      parseInput(CreateAcmeAccountInput, { email: `a${++n}@example.com`, directory_url: directoryUrl }),
    );
    // As if registered earlier: the order is what stalls (its nonce never comes).
    const key = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
    await bed.deps.db
      .updateTable('acme_accounts')
      .set({ account_key_enc: bed.deps.secrets.seal(key), account_url: `${dir.base}/tarpit/account/1`, registered_at: new Date() })
      .where('id', '=', accountId)
      .execute();
    const { id: providerId } = await createDnsProvider(
      bed.ctx(),
      parseInput(CreateDnsProviderInput, {
        kind: 'rfc2136',
        name: `rfc2136 ${++n}`,
        credentials: { server: '127.0.0.1', port: '1', key_name: 'k', key_secret: Buffer.alloc(32, 1).toString('base64') },
      }),
    );
    const cert = await createCertificate(
      bed.ctx(),
      parseInput(CreateCertificateInput, {
        kind: 'acme',
        acme_account_id: accountId,
        dns_provider_id: providerId,
        domains: ['stalled.example.com'],
      }),
    );
    const started = Date.now();
    expect(await issueAcmeCertificate(bed.system(), cert.id, { deadlineMs: 1500, requestTimeoutMs: 30_000 })).toBe('failed');
    expect(Date.now() - started).toBeLessThan(4000);
    const row = await bed.deps.db.selectFrom('certificates').selectAll().where('id', '=', cert.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'failed',
      issuing_since: null,
      last_error: `gave up after 2 s: the ACME CA (${directoryUrl}) did not finish in time`,
    });
  });

  it('a directory that never answers: each request has its time limit, and the error says "not reachable"', async () => {
    await allowPrivate(true);
    const { error, ms } = await register(`${dir.base}/silent/directory`, { deadlineMs: 30_000, requestTimeoutMs: 1000 });
    expect(error).toBe(`the ACME CA (${dir.base}/silent/directory): not reachable`);
    expect(ms).toBeLessThan(4000);
  });
});

describe('RFC 2136 servers under the outbound policy', () => {
  const provider = async (server: string, port = '53') =>
    (
      await createDnsProvider(
        bed.ctx(),
        parseInput(CreateDnsProviderInput, {
          kind: 'rfc2136',
          name: `rfc2136 ${++n}`,
          credentials: { server, port, key_name: 'k', key_secret: Buffer.alloc(32, 1).toString('base64'), zone: 'example.com' },
        }),
      )
    ).id;
  const addStep = async (id: string) =>
    (await checkDnsProvider(bed.ctx(), id, parseInput(CheckDnsProviderInput, { domain: 'example.com' }), { waitMs: 100 })).steps[0];

  it('a server at a metadata address in any spelling is refused at the add step, naming the rule; loopback until allowed', async () => {
    await allowPrivate(true);
    for (const server of ['169.254.169.254', '::ffff:169.254.169.254', '2852039166', 'fd00:ec2::254']) {
      const step = await addStep(await provider(server));
      expect(step, server).toMatchObject({ step: 'add', ok: false });
      expect(step?.detail, server).toMatch(
        /^the DNS server .*: the destination is refused: a (link-local|metadata) address, never allowed$/,
      );
    }
    await allowPrivate(false);
    for (const server of ['0x7f.0.0.1', 'localhost', '127.0.0.1'])
      expect((await addStep(await provider(server)))?.detail, server).toBe(`the DNS server ${server}:53: ${LOOPBACK}`);
  });
});
