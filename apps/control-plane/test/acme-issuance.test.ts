import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountAdminApi } from '@svc/admin-api';
import { JOBS } from '@svc/domain';
import { login, OWNER, setupOwner, startTestServer, type TestServer, until } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type PebbleServer, pebbleAvailable, startPebble } from '@svc/testkit/pebble-server';
import { createWorker, type WorkerService } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane } from '../src/server.ts';

// ACME issuance end to end (issue 16 item 3, "Checked by"): the admin API, the agent gateway and
// the worker in one process; Debian's pebble as the CA, resolving through Debian's BIND, whose
// zone our RFC 2136 adapter changes with TSIG. A certificate is ordered over the admin API,
// issued by the worker, served to a node's agent (the simulator, over gRPC with TLS), renewed by
// the clock 30 days before expiry and on POST /renew, each time reaching the agent as a new
// revision; a failed challenge leaves the old certificate serving and the error readable.
const HAVE = bindAvailable() && pebbleAvailable();
const DAY = 86_400_000;
let bind: BindServer;
let strayBind: BindServer;
let pebble: PebbleServer;
let s: TestServer;
let worker: WorkerService;
let gateway: ReturnType<typeof createControlPlane>;
let endpoint: string;
let gatewayCa: string;
const agents: AgentSimulator[] = [];

beforeAll(async () => {
  if (!HAVE) return;
  bind = await startBind();
  // A second server for the same zone that the CA never asks: values published there fail the challenge.
  strayBind = await startBind();
  pebble = await startPebble({ dnsPort: bind.port, validitySeconds: 90 * 86_400 });
  const caFile = join(tmpdir(), `svc-acme-issuance-ca-${process.pid}.pem`);
  writeFileSync(caFile, pebble.caPem);
  s = await startTestServer({
    env: { SVC_ACME_EXTRA_CA_FILE: caFile, SVC_ACME_PROPAGATION_TIMEOUT_SECONDS: '10' },
    mount: mountAdminApi,
  });
  await setupOwner(s);
  gateway = createControlPlane(s.deps, { host: '127.0.0.1', port: 0, tlsHosts: ['localhost'] });
  const started = await gateway.start();
  endpoint = `localhost:${started.port}`;
  gatewayCa = started.caCertPem;
  worker = createWorker(s.runtime, {
    certificatesEveryMs: 200,
    dnsPollMs: 100,
    only: [JOBS.acmeRegisterAccount, JOBS.certificatesIssue, JOBS.certificatesSweep],
  });
  await worker.start();
}, 90_000);
afterAll(async () => {
  for (const a of agents) await a.disconnect().catch(() => {});
  await worker?.stop();
  await gateway?.stop();
  await s?.stop();
  await pebble?.stop();
  await strayBind?.stop();
  await bind?.stop();
});

let held: { token: string; at: number } | undefined;
/** An owner token valid on the fake clock (the tests move it by weeks; tokens live 15 minutes). */
async function token(): Promise<string> {
  const now = s.clock.now().getTime();
  if (!held || now - held.at > 5 * 60_000) held = { token: (await login(s, OWNER.email, OWNER.password)).access_token, at: now };
  return held.token;
}
const api = {
  get: async (path: string) => s.api.get(`/api/v1${path}`, { token: await token() }),
  post: async (path: string, body?: unknown) => s.api.post(`/api/v1${path}`, body, { token: await token() }),
  patch: async (path: string, body: unknown) => s.api.patch(`/api/v1${path}`, body, { token: await token() }),
};
async function created(path: string, body: unknown): Promise<{ id: string } & Record<string, unknown>> {
  const res = await api.post(path, body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const rfc2136 = (server: BindServer, secret = server.secret) => ({
  kind: 'rfc2136',
  name: `bind ${Math.random().toString(36).slice(2, 8)}`,
  credentials: { server: '127.0.0.1', port: String(server.port), key_name: server.keyName, key_secret: secret },
});

interface CertificateAnswer {
  id: string;
  status: string;
  cert_pem: string | null;
  last_error: string | null;
  failed_attempts: number;
  next_attempt_at: string | null;
  not_after: string | null;
  issuing: boolean;
  domains: string[];
}
const certificate = async (id: string): Promise<CertificateAnswer> => (await api.get(`/certificates/${id}`)).body;
/** Waits until the worker's attempt is over and `done` holds. */
async function settled(id: string, what: string, done: (c: CertificateAnswer) => boolean): Promise<CertificateAnswer> {
  let last: CertificateAnswer | undefined;
  await until(
    what,
    async () => {
      last = await certificate(id);
      return !last.issuing && done(last);
    },
    60_000,
  );
  return last as CertificateAnswer;
}
/** The root pebble's chains end at (its management API). */
const pebbleRoot = () =>
  new Promise<string>((resolve, reject) => {
    get(`${pebble.managementUrl}/roots/0`, { ca: pebble.caPem }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
/** TXT values of `name` at the zone's server. */
async function txtAt(name: string): Promise<string[]> {
  const { Resolver } = await import('node:dns/promises');
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join(''));
}

const serial = (pem: string) => new X509Certificate(pem).serialNumber;
const nodeRevision = async (id: string) =>
  Number((await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision);

/** A node with an agent connected over gRPC/TLS, serving `profileId` on one inbound. */
async function nodeServing(profileId: string, port: number): Promise<{ nodeId: string; agent: AgentSimulator }> {
  const tag = Math.random().toString(36).slice(2, 8);
  const node = await created('/nodes', { name: `n-${tag}`, address: `${tag}.example.com` });
  await created('/inbounds', { node_id: node.id, profile_id: profileId, port });
  const enroll = await api.post(`/nodes/${node.id}/enroll-token`);
  expect(enroll.status, enroll.text).toBe(201);
  const agent = await AgentSimulator.enroll({ endpoint, caCertPem: gatewayCa, token: enroll.body.token });
  agents.push(agent);
  agent.connect();
  await agent.waitForRevision(BigInt(await nodeRevision(node.id)));
  return { nodeId: node.id, agent };
}
/** The certificate PEM of the agent's latest DesiredState. */
const servedPem = (agent: AgentSimulator) => agent.desiredStates.at(-1)?.config?.certificates[0]?.certPem;

let accountId: string;
let providerId: string;
let certId: string;
let tlsNode: { nodeId: string; agent: AgentSimulator };
let otherNode: { nodeId: string; agent: AgentSimulator };
const NAME = () => `svc.${bind.zone}`;

describe.skipIf(!HAVE)('ACME certificates issued, served, renewed (pebble + BIND + agent gateway + worker)', () => {
  it('kind acme starts pending; the worker issues it over DNS-01 (apex and wildcard at once), chained to the CA, TXT values removed', async () => {
    providerId = (await created('/dns-providers', rfc2136(bind))).id;
    accountId = (await created('/acme-accounts', { email: 'certs@example.com', directory_url: pebble.directoryUrl })).id;
    const asked = await created('/certificates', {
      kind: 'acme',
      name: 'edge',
      acme_account_id: accountId,
      dns_provider_id: providerId,
      domains: [NAME(), `*.${NAME()}`],
    });
    certId = asked.id;
    expect(asked).toMatchObject({ kind: 'acme', status: 'pending', cert_pem: null, has_key: false, domains: [NAME(), `*.${NAME()}`] });
    const issued = await settled(certId, 'issued', (c) => c.status === 'issued');
    expect(issued.last_error).toBeNull();
    const [leafPem, intermediatePem] = (issued.cert_pem as string).split(/(?<=-----END CERTIFICATE-----)\s*/).filter(Boolean);
    const leaf = new X509Certificate(leafPem as string);
    const intermediate = new X509Certificate(intermediatePem as string);
    const root = new X509Certificate(await pebbleRoot());
    expect(leaf.verify(intermediate.publicKey)).toBe(true);
    expect(intermediate.verify(root.publicKey)).toBe(true);
    expect(leaf.subjectAltName).toContain(`DNS:${NAME()}`);
    expect(leaf.subjectAltName).toContain(`DNS:*.${NAME()}`);
    // Renewal due 30 days before the 90-day certificate expires.
    expect(Date.parse(issued.next_attempt_at as string)).toBe(Date.parse(issued.not_after as string) - 30 * DAY);
    expect(await txtAt(`_acme-challenge.${NAME()}`)).toEqual([]);
    const events = await s.deps.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'certificate.issued').execute();
    expect(events.map((e) => (e.payload as { certificate_id: string }).certificate_id)).toContain(certId);
  });

  it('the node serving TLS with it receives the PEMs from the agent gateway', async () => {
    const profile = await created('/inbound-profiles', {
      name: 'trojan-acme',
      protocol: 'trojan',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: certId, server_names: [NAME()] } },
    });
    const plain = await created('/inbound-profiles', {
      name: 'vmess-plain',
      protocol: 'vmess',
      stream: { network: 'tcp', security: 'none' },
    });
    tlsNode = await nodeServing(profile.id, 24_443);
    otherNode = await nodeServing(plain.id, 24_444);
    expect(servedPem(tlsNode.agent)).toBe((await certificate(certId)).cert_pem);
  });

  it('POST /certificates/{id}/renew renews now (202); an uploaded certificate is 409', async () => {
    const before = await certificate(certId);
    const revision = await nodeRevision(tlsNode.nodeId);
    const res = await api.post(`/certificates/${certId}/renew`);
    expect(res.status, res.text).toBe(202);
    expect(res.body.id).toBe(certId);
    const renewed = await settled(certId, 'renewed on request', (c) => c.cert_pem !== before.cert_pem);
    await tlsNode.agent.waitForRevision(BigInt(revision + 1));
    expect(servedPem(tlsNode.agent)).toBe(renewed.cert_pem);
    expect((await api.post('/certificates/crt_missing/renew')).status).toBe(404);
    const uploaded = await s.deps.db.selectFrom('certificates').select('id').where('kind', '=', 'uploaded').executeTakeFirst();
    if (uploaded) expect((await api.post(`/certificates/${uploaded.id}/renew`)).status).toBe(409);
  });

  it('a failed challenge leaves the old certificate serving and the error readable; the next attempt waits for its backoff', async () => {
    // Values published where the CA does not look: the CA's own lookup fails the challenge.
    const stray = await created('/dns-providers', rfc2136(strayBind));
    expect((await api.patch(`/certificates/${certId}`, { dns_provider_id: stray.id })).status).toBe(200);
    const before = await certificate(certId);
    const revision = await nodeRevision(tlsNode.nodeId);
    const seen = tlsNode.agent.desiredStates.length;
    expect((await api.post(`/certificates/${certId}/renew`)).status).toBe(202);
    const failed = await settled(certId, 'failed renewal', (c) => c.failed_attempts === 1);
    expect(failed.status).toBe('issued');
    expect(failed.cert_pem).toBe(before.cert_pem);
    expect(failed.last_error).toMatch(/^the CA refused: .*TXT records for DNS challenge/);
    expect(Date.parse(failed.next_attempt_at as string) - s.clock.now().getTime()).toBeGreaterThan(50 * 60_000);
    expect(await nodeRevision(tlsNode.nodeId)).toBe(revision);
    expect(tlsNode.agent.desiredStates.length).toBe(seen);
    expect(servedPem(tlsNode.agent)).toBe(before.cert_pem);
    const event = await s.deps.db
      .selectFrom('events')
      .select('payload')
      .where('type', '=', 'certificate.issue_failed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event.payload).toMatchObject({ certificate_id: certId, serving_until: before.not_after, failed_attempts: 1 });
    // Back to the provider the CA sees: the next renewal succeeds and clears the error.
    expect((await api.patch(`/certificates/${certId}`, { dns_provider_id: providerId })).status).toBe(200);
    expect((await api.post(`/certificates/${certId}/renew`)).status).toBe(202);
    const healed = await settled(certId, 'renewed after the failure', (c) => c.cert_pem !== before.cert_pem);
    expect(healed).toMatchObject({ status: 'issued', last_error: null, failed_attempts: 0 });
  });

  it('a first issuance that fails ends failed with the provider refusal (a wrong TSIG key), and a fixed provider issues it', async () => {
    const wrong = await created('/dns-providers', rfc2136(bind, Buffer.alloc(32, 7).toString('base64')));
    const asked = await created('/certificates', {
      kind: 'acme',
      acme_account_id: accountId,
      dns_provider_id: wrong.id,
      domains: [`www.${bind.zone}`],
    });
    const failed = await settled(asked.id, 'failed', (c) => c.status === 'failed');
    expect(failed.last_error).toMatch(/refused the update of zone .*NOTAUTH \(BADSIG\)/);
    expect(failed).toMatchObject({ cert_pem: null, failed_attempts: 1 });
    const fixed = await api.patch(`/dns-providers/${wrong.id}`, { credentials: rfc2136(bind).credentials });
    expect(fixed.status, fixed.text).toBe(200);
    expect((await api.post(`/certificates/${asked.id}/renew`)).status).toBe(202);
    const issued = await settled(asked.id, 'issued after the fix', (c) => c.status === 'issued');
    expect(new X509Certificate(issued.cert_pem as string).subjectAltName).toBe(`DNS:www.${bind.zone}`);
  });

  it("the material of an ACME certificate is the CA's: new PEMs by PATCH are 409", async () => {
    const res = await api.patch(`/certificates/${certId}`, { cert_pem: 'x', key_pem: 'y' });
    expect(res.status, res.text).toBe(409);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('renewal 30 days before expiry, driven by the clock: new material, a new revision for its node only', async () => {
    const before = await certificate(certId);
    const [tlsRevision, otherRevision] = [await nodeRevision(tlsNode.nodeId), await nodeRevision(otherNode.nodeId)];
    const realNow = s.clock.now();
    s.clock.advance(59 * DAY);
    // Not due yet: 31 days left.
    await new Promise((r) => setTimeout(r, 600));
    expect((await certificate(certId)).cert_pem).toBe(before.cert_pem);
    s.clock.advance(2 * DAY);
    await settled(certId, 'renewed', (c) => c.cert_pem !== before.cert_pem);
    // The CA dates what it issues by its own clock, 61 days behind ours: back to the CA's time,
    // or every renewal would be due again at once.
    s.clock.set(realNow);
    const renewed = await settled(certId, 'settled', () => true);
    expect(renewed.status).toBe('issued');
    expect(serial(renewed.cert_pem as string)).not.toBe(serial(before.cert_pem as string));
    await until('the agent serves the renewed certificate', () => servedPem(tlsNode.agent) === renewed.cert_pem, 20_000);
    expect(await nodeRevision(tlsNode.nodeId)).toBeGreaterThan(tlsRevision);
    expect(await nodeRevision(otherNode.nodeId)).toBe(otherRevision);
    const audit = await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', certId).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['certificate.issued', 'certificate.renewed']));
  });
});
