import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountAdminApi } from '@svc/admin-api';
import { JOBS, OUTBOUND_ANSWER_HIDDEN, PRIVATE_NETWORKS_SETTING } from '@svc/domain';
import { adminWithRole, setupOwner, startTestServer, type TestServer, until } from '@svc/testkit';
import { type AcmeDirectoryStandIn, startAcmeDirectoryStandIn } from '@svc/testkit/acme-directory-stand-in';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type PebbleServer, pebbleAvailable, startPebble } from '@svc/testkit/pebble-server';
import { createWorker, type WorkerService } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ACME under the outbound policy through the admin API and the real worker (issue 29.2;
// docs/certificates.md, "Where the server connects"): pebble (behind BIND) as the CA that works,
// the directory stand-in for the hostile ones. A directory at a metadata address is refused in any
// spelling, loopback only once the owner allows private networks; every URL a directory names must
// be https, refused before a request is made to it; and a CA whose newNonce never answers fails its
// jobs at their deadline while another account registers and another account's certificate issues.
const HAVE = bindAvailable() && pebbleAvailable();
// Long enough that the good account and certificate are done while the tarpit still holds its slots.
const REGISTRATION_DEADLINE_MS = 15_000;
let bind: BindServer;
let pebble: PebbleServer;
let dir: AcmeDirectoryStandIn;
let s: TestServer;
let worker: WorkerService;
let token: string;
let viewer: string;

beforeAll(async () => {
  if (!HAVE) return;
  bind = await startBind();
  pebble = await startPebble({ dnsPort: bind.port, validitySeconds: 90 * 86_400 });
  dir = await startAcmeDirectoryStandIn();
  const caFile = join(tmpdir(), `svc-acme-outbound-app-ca-${process.pid}.pem`);
  writeFileSync(caFile, `${pebble.caPem}\n${dir.caPem}`);
  s = await startTestServer({
    // '' unsets the testkit's default: the installation setting decides, off until the owner says.
    env: { SVC_ACME_EXTRA_CA_FILE: caFile, SVC_ACME_PROPAGATION_TIMEOUT_SECONDS: '10', SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' },
    mount: mountAdminApi,
  });
  // The fake clock stands still here: these tokens stay valid (and sign-ins are rate limited).
  token = (await setupOwner(s)).access_token;
  viewer = (await adminWithRole(s, token, 'viewer')).access_token;
  worker = createWorker(s.runtime, {
    certificatesEveryMs: 200,
    dnsPollMs: 100,
    acme: { registrationDeadlineMs: REGISTRATION_DEADLINE_MS, requestTimeoutMs: 15_000 },
    only: [JOBS.acmeRegisterAccount, JOBS.certificatesIssue, JOBS.certificatesSweep],
  });
  await worker.start();
}, 90_000);
afterAll(async () => {
  await worker?.stop();
  await s?.stop();
  await dir?.close();
  await pebble?.stop();
  await bind?.stop();
});

let n = 0;
const post = async (path: string, body: unknown) => {
  const res = await s.api.post(`/api/v1${path}`, body, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
};
const account = (directoryUrl: string) => post('/acme-accounts', { email: `acct-${++n}@example.com`, directory_url: directoryUrl });
const get = async (path: string, as = token) => (await s.api.get(`/api/v1${path}`, { token: as })).body;
/** The account once the worker's first attempt is over: registered, or its error. */
async function registration(id: string, timeoutMs = 30_000): Promise<{ registered: boolean; registration_error: string | null }> {
  let view: { registered: boolean; registration_error: string | null } = { registered: false, registration_error: null };
  await until(
    `account ${id} registered or refused`,
    async () => {
      view = await get(`/acme-accounts/${id}`);
      return view.registered || view.registration_error !== null;
    },
    timeoutMs,
  );
  return view;
}
const allowPrivate = async (value: boolean) =>
  expect((await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: value }, { token })).status).toBe(200);
const LOOPBACK = `the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`;

describe.skipIf(!HAVE)('ACME under the outbound policy (admin API + worker, pebble)', () => {
  it('a directory at 169.254.169.254, [::ffff:169.254.169.254], 0x7f.0.0.1 or localhost is refused while private networks are not allowed', async () => {
    const pebblePort = new URL(pebble.directoryUrl).port;
    for (const url of ['https://169.254.169.254/directory', 'https://[::ffff:169.254.169.254]/directory']) {
      const { registration_error } = await registration((await account(url)).id);
      expect(registration_error, url).toMatch(/^the ACME CA \(.*\): the destination is refused: a link-local address, never allowed$/);
    }
    for (const url of [`https://0x7f.0.0.1:${pebblePort}/dir`, pebble.directoryUrl]) {
      const { registration_error } = await registration((await account(url)).id);
      expect(registration_error, url).toBe(`the ACME CA (${new URL(url).href}): ${LOOPBACK}`);
    }
  });

  it('allowed by the owner, pebble at 0x7f.0.0.1 and at localhost registers; [::ffff:169.254.169.254] stays refused', async () => {
    await allowPrivate(true);
    try {
      const pebblePort = new URL(pebble.directoryUrl).port;
      for (const url of [`https://0x7f.0.0.1:${pebblePort}/dir`, pebble.directoryUrl])
        expect(await registration((await account(url)).id), url).toMatchObject({ registered: true, registration_error: null });
      expect((await registration((await account('https://[::ffff:169.254.169.254]/directory')).id)).registration_error).toMatch(
        /never allowed$/,
      );
    } finally {
      await allowPrivate(false);
    }
  });

  it('a directory naming an http newNonce, redirecting to http, or whose newNonce redirects to http is refused without a request to the http URL', async () => {
    await allowPrivate(true);
    try {
      const errors = await Promise.all(
        ['/http-nonce/directory', '/redirect-to-http/directory', '/nonce-redirects/directory'].map(
          async (path) => (await registration((await account(`${dir.base}${path}`)).id)).registration_error,
        ),
      );
      expect(errors[0]).toBe(
        `the ACME directory ${dir.base}/http-nonce/directory names newNonce at a URL that is not https: refused, no request made to it`,
      );
      expect(errors[1]).toMatch(/: the destination is refused: only https is allowed$/);
      expect(errors[2]).toMatch(/: the destination is refused: only https is allowed$/);
      expect(dir.httpSeen).toEqual([]);
    } finally {
      await allowPrivate(false);
    }
  });

  it('a CA whose newNonce never answers fails its registration and its certificate within the deadline, while another account registers and its certificate issues', async () => {
    await allowPrivate(true);
    try {
      const provider = await post('/dns-providers', {
        kind: 'rfc2136',
        name: 'bind',
        credentials: { server: '127.0.0.1', port: String(bind.port), key_name: bind.keyName, key_secret: bind.secret },
      });
      const started = Date.now();
      // The tarpit first, so it takes the slots before the good ones ask.
      const tarpit = await account(`${dir.base}/tarpit/directory`);
      const stuck = await post('/certificates', {
        kind: 'acme',
        acme_account_id: tarpit.id,
        dns_provider_id: provider.id,
        domains: [`stuck.${bind.zone}`],
      });
      const good = await account(pebble.directoryUrl);
      const issued = await post('/certificates', {
        kind: 'acme',
        acme_account_id: good.id,
        dns_provider_id: provider.id,
        domains: [`ok.${bind.zone}`],
      });

      const gaveUp = `gave up after ${Math.round(REGISTRATION_DEADLINE_MS / 1000)} s: the ACME CA (${dir.base}/tarpit/directory) did not finish in time`;
      // While the tarpit holds a registration slot and an issuance slot, the others go through.
      expect(await registration(good.id, REGISTRATION_DEADLINE_MS)).toMatchObject({ registered: true });
      await until(
        'the other certificate issued',
        async () => (await get(`/certificates/${issued.id}`)).status === 'issued',
        REGISTRATION_DEADLINE_MS,
      );
      expect((await get(`/acme-accounts/${tarpit.id}`)).registration_error).toBeNull();
      expect(dir.seen).toContain('HEAD /tarpit/nonce');
      // Then the deadline: both of the tarpit's jobs fail with it, and free their slots.
      expect((await registration(tarpit.id, 2 * REGISTRATION_DEADLINE_MS)).registration_error).toBe(gaveUp);
      await until(
        'the stuck certificate failed',
        async () => (await get(`/certificates/${stuck.id}`)).status === 'failed',
        2 * REGISTRATION_DEADLINE_MS,
      );
      expect(await get(`/certificates/${stuck.id}`)).toMatchObject({ status: 'failed', last_error: gaveUp, issuing: false });
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(REGISTRATION_DEADLINE_MS - 1000);
      expect(took).toBeLessThan(REGISTRATION_DEADLINE_MS + 10_000);
      // The words of the failure are the owner's and the admins' to read; a viewer reads that it failed.
      expect((await get(`/certificates/${stuck.id}`, viewer)).last_error).toBe(OUTBOUND_ANSWER_HIDDEN);
      expect((await get(`/acme-accounts/${tarpit.id}`, viewer)).registration_error).toBe(OUTBOUND_ANSWER_HIDDEN);
    } finally {
      await allowPrivate(false);
    }
  }, 120_000);
});
