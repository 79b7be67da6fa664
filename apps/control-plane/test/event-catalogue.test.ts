import 'reflect-metadata';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { mountAdminApi } from '@svc/admin-api';
import {
  type AcmeProtocol,
  AGENT_RELEASE,
  EVENT_CATALOGUE,
  EVENT_TYPES,
  EVENT_VERSION,
  type EventType,
  JOBS,
  type JobName,
  type MailMessage,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
} from '@svc/domain';
import { createPortalApi } from '@svc/portal-api';
import { CutoffReason } from '@svc/proto';
import { selfSignedCertificate } from '@svc/testkit';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { createWorker, type WorkerService } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * Issue 35.2, "Checked by": every catalogued event fires once for its cause and reaches a
 * webhook receiver with a valid signature. One installation (the admin API, the portal beside it,
 * the agent gateway, the worker's jobs in process) and a real HTTP receiver on 127.0.0.1 with two
 * endpoints: one subscribed to every type (event_types null), one to a few types. Each cause is
 * driven through its real transport:
 * - the admin API for subscriptions, clients (approve/reject routes, PATCH status), admins, API
 *   tokens, uploaded certificates (new material by PATCH), manual payments (confirm, refund),
 *   node quotas and agent upgrades;
 * - the portal for registrations and the manual checkout (a customer signed in by magic link);
 * - the agent simulator over gRPC (mTLS) for nodes online/offline, an outdated agent, a failed
 *   upgrade, failed and recovered applies, served certificates, and usage reports that take a
 *   subscription past 80% and 100% of its limit and a node to its quota;
 * - the usage credit (limited), the worker's sweeps on the test clock
 *   (subscriptions.sweep for expired, nodes.presence-sweep for offline after the grace,
 *   certificates.sweep for expiring), certificates.issue for ACME, events.dispatch and
 *   webhooks.deliver for every delivery.
 * ACME issuance needs a CA: pebble behind BIND (acme-issuance.test.ts) is too heavy here, so the
 * CA is played in process at the ACME protocol port (DomainDeps.vendors.acme, the seam the
 * runtime fills with acme-client). Everything else is as in production: the account and the
 * certificate created over the admin API, the worker's acme.register-account and
 * certificates.issue jobs running issueAcmeCertificate, which records certificate.issued or
 * certificate.issue_failed.
 * The test clock stands still until the section on time (the times in the payloads are its now).
 * The last test checks, once the pipeline is idle, that each cause's event arrived exactly once
 * (by envelope id and by type and subject), signed, version 1, its data as the catalogue's schema
 * says; that every recorded event reached the all-types endpoint once and the subset endpoint only
 * its types; and that the types seen are the catalogue's: a type added without a cause here fails.
 */

const GRACE_SECONDS = 10;
const SUBSET: EventType[] = [
  'subscription.traffic_80_percent',
  'client.approved',
  'node.offline',
  'payment.succeeded',
  'certificate.issued',
  'api_token.revoked',
];
const OLD_AGENT = '0.1.0';
const V2RAY_WORDS = 'main: failed to read config files: [config.next.json] > Config: unknown transport protocol: grpc';
const PASSWORD = 'a long enough password 1';

interface Envelope {
  id: string;
  type: EventType;
  version: number;
  occurred_at: string;
  data: Record<string, unknown>;
}
interface Delivery {
  endpoint: 'all' | 'subset';
  body: string;
  signature: string;
  eventHeader: string;
  /** The installation's (test) clock when it arrived: what a receiver checks the timestamp against. */
  at: Date;
  envelope: Envelope;
}
/** One cause driven here: the event it must raise, once, naming this subject (and these payload fields). */
interface Cause {
  type: EventType;
  data: Record<string, unknown>;
}

let g: Gateway;
let worker: WorkerService;
let stopMail: () => Promise<void>;
let receiver: Server;
let dist: string;
const portal = createPortalApi();
const hooks: Record<'all' | 'subset', { id: string; secret: string }> = {} as never;
const deliveries: Delivery[] = [];
const mails: MailMessage[] = [];
const causes: Cause[] = [];
const agents: AgentSimulator[] = [];

/** A CA played in process at the ACME port: accounts always register; orders for refused.example.com are refused. */
const standInCa: AcmeProtocol = {
  newAccountKeyPem: async () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  session: async (o, work) =>
    work(
      {
        createAccount: async () => ({}),
        getAccountUrl: () => new URL('/acme/acct/1', o.directoryUrl).href,
        orderCertificate: async (domains) => {
          if (domains.includes('refused.example.com'))
            throw new Error('urn:ietf:params:acme:error:rejectedIdentifier: policy forbids issuing for refused.example.com');
          const issued = selfSignedCertificate({ cn: domains[0] as string, dnsNames: [...domains], days: 90 });
          return { chainPem: issued.cert_pem, keyPem: issued.key_pem };
        },
      },
      new AbortController().signal,
    ),
};

beforeAll(async () => {
  // The release an agent upgrade is offered (POST /nodes/{id}/upgrade-agent serves it from here).
  dist = mkdtempSync(join(tmpdir(), 'svc-event-catalogue-dist-'));
  const release = '#!/usr/bin/env node\n';
  writeFileSync(join(dist, `svc-agent-${AGENT_RELEASE}.mjs`), release);
  writeFileSync(
    join(dist, `svc-agent-${AGENT_RELEASE}.mjs.sha256`),
    `${createHash('sha256').update(release).digest('hex')}  svc-agent-${AGENT_RELEASE}.mjs\n`,
  );
  g = await startGateway({
    server: {
      env: {
        SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS: String(GRACE_SECONDS),
        SVC_PORTAL_REGISTRATION: 'application',
        SVC_AGENT_DIST_DIR: dist,
        SVC_PUBLIC_BASE_URL: 'https://cp.example.com',
      },
    },
    mount: (root) => {
      root.route('/', portal.routes);
      return [mountAdminApi(root), portal];
    },
  });
  g.s.deps.vendors.acme = standInCa;

  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      deliveries.push({
        endpoint: req.url === '/hooks/subset' ? 'subset' : 'all',
        body,
        signature: String(req.headers[SIGNATURE_HEADER.toLowerCase()] ?? ''),
        eventHeader: String(req.headers['x-svc-event'] ?? ''),
        at: g.s.clock.now(),
        envelope: JSON.parse(body),
      });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  for (const [endpoint, event_types] of [
    ['all', null],
    ['subset', SUBSET],
  ] as const) {
    const created = await api('post', '/api/v1/webhooks', { url: `${base}/${endpoint}`, event_types });
    expect(created.event_types).toEqual(event_types);
    hooks[endpoint] = { id: created.id, secret: created.secret };
  }

  // The mails (sign-in links) are read here; every other job runs in the worker.
  stopMail = await g.s.deps.jobs.consume(JOBS.mailSend, async (m) => {
    mails.push(m);
  });
  // The sweeps on their default schedules (the tests run them when the clock has moved), but
  // events.dispatch often: each recorded event asks for it, yet over BullMQ an event committed
  // while a dispatch runs finds that job's id taken and waits for the scheduled run.
  worker = createWorker(g.s.runtime, {
    eventsEveryMs: 250,
    only: (Object.values(JOBS) as JobName[]).filter((j) => j !== JOBS.mailSend),
  });
  await worker.start();
}, 60_000);

afterAll(async () => {
  for (const a of agents) await a.disconnect().catch(() => {});
  await worker?.stop();
  await stopMail?.();
  await g?.stop();
  await new Promise((r) => receiver?.close(r));
  if (dist) rmSync(dist, { recursive: true, force: true });
});

async function api(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown) {
  const token = await g.token();
  const res =
    method === 'get' || method === 'delete' ? await g.s.api[method](path, { token }) : await g.s.api[method](path, body, { token });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
}

/** Expects `type` once for this cause, naming these fields (the subject, and what the payload must say). */
function cause(type: EventType, data: Record<string, unknown>): Cause {
  const c = { type, data };
  causes.push(c);
  return c;
}
const matches = (e: Envelope, c: Cause) => e.type === c.type && Object.entries(c.data).every(([k, v]) => isDeepStrictEqual(e.data[k], v));
const deliveredTo = (endpoint: Delivery['endpoint']) => deliveries.filter((d) => d.endpoint === endpoint);

/** Waits until each cause's event reached the all-types endpoint. */
async function arrived(...expected: Cause[]) {
  await eventually(async () => {
    const missing = expected.filter((c) => !deliveredTo('all').some((d) => matches(d.envelope, c)));
    expect(missing).toEqual([]);
  }, 20_000);
}

/** Waits until the pipeline is idle: every event dispatched, every delivery made and received. */
async function settled() {
  const db = g.s.deps.db;
  await eventually(async () => {
    const undispatched = await db.selectFrom('events').select('id').where('dispatched_at', 'is', null).execute();
    expect(undispatched).toEqual([]);
    const open = await db.selectFrom('webhook_deliveries').select(['id', 'status']).where('status', '!=', 'succeeded').execute();
    expect(open).toEqual([]);
    const made = await db.selectFrom('webhook_deliveries').select('id').execute();
    expect(deliveries).toHaveLength(made.length);
  }, 20_000);
}

/** A node of the fleet with an agent enrolled for it (naming `agentVersion`), its stream not open yet. */
async function enrolled(agentVersion?: string) {
  const { node, enrollToken } = await g.nodeWithToken();
  const agent = await AgentSimulator.enroll({ endpoint: g.endpoint, caCertPem: g.caCertPem, token: enrollToken, agentVersion });
  agents.push(agent);
  return { node: (await api('get', `/api/v1/nodes/${node.id}`)) as { id: string; name: string }, agent };
}

/** Until the agent applied the node's desired revision. */
async function caughtUp(nodeId: string) {
  await eventually(async () => {
    const row = await nodeRow(g, nodeId);
    expect(Number(row.applied_revision)).toBe(Number(row.desired_revision));
  }, 10_000);
}

let port = 30_000;
/** A serving inbound on the node (a new profile), in a new access group: a new desired revision. */
async function inboundOn(nodeId: string, stream: Record<string, unknown> = { network: 'tcp', security: 'none' }) {
  const profile = await api('post', '/api/v1/inbound-profiles', { name: `p-${port}`, protocol: 'vless', stream });
  const inbound = await api('post', '/api/v1/inbounds', { node_id: nodeId, profile_id: profile.id, port: port++ });
  const group = await api('post', '/api/v1/access-groups', { name: `g-${port}`, inbound_ids: [inbound.id] });
  return { inbound, group };
}

const unique = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;
const client = async (tag: string) => (await api('post', '/api/v1/clients', { email: unique(tag) })) as { id: string; email: string };
const DAY = 86_400_000;
const inDays = (n: number) => new Date(g.s.clock.now().getTime() + n * DAY).toISOString();

describe('every catalogued event fires once for its cause and reaches a webhook receiver, signed', () => {
  it('subscriptions over the admin API: created, updated, disabled, enabled, renewed, credentials rotated, deleted', async () => {
    const owner = await client('subs');
    const sub = await api('post', '/api/v1/subscriptions', { client_id: owner.id, access_group_ids: [], expires_at: inDays(30) });
    const subject = { subscription_id: sub.id, client_id: owner.id };
    const created = cause('subscription.created', {
      ...subject,
      status: 'active',
      expires_at: sub.expires_at,
      traffic_limit_bytes: null,
      renewal: 'no_reset',
      access_group_ids: [],
    });

    await api('patch', `/api/v1/subscriptions/${sub.id}`, { note: 'VIP' });
    const updated = cause('subscription.updated', { ...subject, changed: ['note'], status: 'active', bulk_job_id: null });
    await api('patch', `/api/v1/subscriptions/${sub.id}`, { status: 'disabled' });
    const disabled = cause('subscription.disabled', { ...subject, previous_status: 'active' });
    await api('patch', `/api/v1/subscriptions/${sub.id}`, { status: 'active' });
    const enabled = cause('subscription.enabled', { ...subject, status: 'active' });
    const later = inDays(60);
    await api('patch', `/api/v1/subscriptions/${sub.id}`, { expires_at: later });
    const renewed = cause('subscription.renewed', {
      ...subject,
      previous_expires_at: sub.expires_at,
      expires_at: later,
      plan_id: null,
      status: 'active',
    });
    await api('post', `/api/v1/subscriptions/${sub.id}/rotate-credentials`);
    const rotated = cause('subscription.credentials_rotated', subject);
    await api('delete', `/api/v1/subscriptions/${sub.id}`);
    const deleted = cause('subscription.deleted', { ...subject, status: 'active' });

    await arrived(created, updated, disabled, enabled, renewed, rotated, deleted);
  });

  it('clients: registered on the portal (application mode), approved, rejected, disabled and enabled over the admin API', async () => {
    const registered = [];
    for (const tag of ['applicant', 'refused']) {
      const email = unique(tag);
      const res = await g.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD });
      expect(res.status, res.text).toBe(201);
      registered.push({ id: res.body.id as string, email });
    }
    const [a, b] = registered as [{ id: string; email: string }, { id: string; email: string }];
    const causesOf = registered.map((r) =>
      cause('client.registered', {
        client_id: r.id,
        email: r.email,
        status: 'pending',
        method: 'password',
        registration_mode: 'application',
      }),
    );
    await api('post', `/api/v1/clients/${a.id}/approve`);
    const approved = cause('client.approved', { client_id: a.id, email: a.email, previous_status: 'pending' });
    await api('post', `/api/v1/clients/${b.id}/reject`);
    const rejected = cause('client.rejected', { client_id: b.id, email: b.email });
    await api('patch', `/api/v1/clients/${a.id}`, { status: 'disabled' });
    const disabled = cause('client.disabled', { client_id: a.id, email: a.email });
    await api('patch', `/api/v1/clients/${a.id}`, { status: 'active' });
    const enabled = cause('client.enabled', { client_id: a.id, email: a.email });

    await arrived(...causesOf, approved, rejected, disabled, enabled);
  });

  it('admins and API tokens over the admin API: created, role changed, deleted; a token created and revoked', async () => {
    const me = await api('get', '/api/v1/auth/me');
    const email = unique('admin');
    const admin = await api('post', '/api/v1/admins', { email, password: PASSWORD, role: 'viewer' });
    const created = cause('admin.created', { admin_id: admin.id, email, role: 'viewer' });
    await api('patch', `/api/v1/admins/${admin.id}`, { role: 'admin' });
    const changed = cause('admin.role_changed', { admin_id: admin.id, email, role: 'admin', previous_role: 'viewer' });
    await api('delete', `/api/v1/admins/${admin.id}`);
    const deleted = cause('admin.deleted', { admin_id: admin.id, email, role: 'admin' });

    const token = await api('post', '/api/v1/api-tokens', { name: 'shop bot', scopes: ['subscriptions:read'] });
    const tokenCreated = cause('api_token.created', {
      token_id: token.id,
      name: 'shop bot',
      admin_id: me.id,
      scopes: ['subscriptions:read'],
      expires_at: null,
    });
    await api('delete', `/api/v1/api-tokens/${token.id}`);
    const revoked = cause('api_token.revoked', { token_id: token.id, name: 'shop bot', admin_id: me.id });

    await arrived(created, changed, deleted, tokenCreated, revoked);
  });

  it('payments: a manual checkout on the portal awaits confirmation; the admin confirms it (succeeded) and refunds it', async () => {
    const plan = await api('post', '/api/v1/plans', { name: 'Monthly', price: 990, currency: 'EUR', duration_days: 30 });
    const provider = await api('post', '/api/v1/payment-providers', {
      kind: 'manual',
      name: 'Bank transfer',
      enabled: true,
      config: { instructions: 'IBAN DE00 0000; reference: your email' },
    });
    // A customer signs in on the portal with the link mailed to them.
    const buyer = await client('buyer');
    expect((await g.s.api.post('/portal/v1/auth/magic-link', { email: buyer.email })).status).toBe(202);
    const link = await eventually(async () => {
      const mail = mails.find((m) => m.to === buyer.email);
      expect(mail).toBeDefined();
      return /[#?&]token=([A-Za-z0-9_-]+)/.exec(mail?.text ?? '')?.[1] as string;
    });
    const signedIn = await g.s.api.post('/portal/v1/auth/callback', { token: link });
    expect(signedIn.status, signedIn.text).toBe(200);

    const checkout = await g.s.api.post(
      '/portal/v1/checkout',
      { plan_id: plan.id, provider_id: provider.id },
      { token: signedIn.body.access_token, headers: { 'idempotency-key': randomUUID() } },
    );
    expect(checkout.status, checkout.text).toBe(201);
    const paymentId = checkout.body.payment_id as string;
    const awaiting = cause('payment.awaiting_confirmation', {
      payment_id: paymentId,
      client_id: buyer.id,
      client_email: buyer.email,
      plan_id: plan.id,
      provider_id: provider.id,
      subscription_id: null,
      amount: 990,
      currency: 'EUR',
      expires_at: checkout.body.expires_at,
    });
    const confirmed = await api('post', `/api/v1/payments/${paymentId}/confirm`);
    const succeeded = cause('payment.succeeded', {
      payment_id: paymentId,
      client_id: buyer.id,
      plan_id: plan.id,
      subscription_id: confirmed.subscription_id,
      amount: 990,
      currency: 'EUR',
    });
    await api('post', `/api/v1/payments/${paymentId}/refund`);
    const refunded = cause('payment.refunded', {
      payment_id: paymentId,
      client_id: buyer.id,
      subscription_id: confirmed.subscription_id,
      amount: 990,
      currency: 'EUR',
    });

    await arrived(awaiting, succeeded, refunded);
  });

  it('certificates: an upload expiring within 14 days is announced by certificates.sweep; the worker issues an ACME certificate, and fails another', async () => {
    const soon = await api('post', '/api/v1/certificates', {
      kind: 'uploaded',
      name: 'soon',
      ...selfSignedCertificate({ cn: 'soon.example.com', days: 10 }),
    });
    await g.s.deps.jobs.enqueue(JOBS.certificatesSweep, {});
    const expiring = cause('certificate.expiring', {
      certificate_id: soon.id,
      name: 'soon',
      domains: ['soon.example.com'],
      not_after: soon.not_after,
      days_left: Math.floor((Date.parse(soon.not_after) - g.s.clock.now().getTime()) / DAY),
    });

    const account = await api('post', '/api/v1/acme-accounts', {
      email: unique('acme'),
      directory_url: 'https://ca.example.net/directory',
    });
    const dns = await api('post', '/api/v1/dns-providers', { kind: 'cloudflare', name: 'zone', credentials: { api_token: 'cf-token' } });
    const acme = (domain: string) =>
      api('post', '/api/v1/certificates', { kind: 'acme', acme_account_id: account.id, dns_provider_id: dns.id, domains: [domain] });
    const shop = await acme('shop.example.com');
    const issued = cause('certificate.issued', { certificate_id: shop.id, domains: ['shop.example.com'], renewal: false });
    const bad = await acme('refused.example.com');
    const failed = cause('certificate.issue_failed', {
      certificate_id: bad.id,
      domains: ['refused.example.com'],
      failed_attempts: 1,
      serving_until: null,
    });

    await arrived(expiring, issued, failed);
    const shown = await api('get', `/api/v1/certificates/${shop.id}`);
    expect(shown).toMatchObject({ status: 'issued', has_key: true });
    expect(deliveredTo('all').find((d) => matches(d.envelope, issued))?.envelope.data.not_after).toBe(shown.not_after);
    const failure = deliveredTo('all').find((d) => matches(d.envelope, failed));
    expect(failure?.envelope.data.error).toMatch(/^the CA refused: .*rejectedIdentifier/);
  });

  let edge: { node: { id: string; name: string }; agent: AgentSimulator; group: { id: string } };

  it('nodes over gRPC: online, an outdated agent, a served certificate, a failed upgrade, a failed apply and its recovery', async () => {
    // Enrolled with an older release: node.agent_outdated once (at enrollment; the Hello says the same version).
    const { node, agent } = await enrolled(OLD_AGENT);
    const outdated = cause('node.agent_outdated', {
      node_id: node.id,
      name: node.name,
      agent_version: OLD_AGENT,
      previous_agent_version: null,
      release: AGENT_RELEASE,
    });
    const cert = await api('post', '/api/v1/certificates', {
      kind: 'uploaded',
      name: 'edge',
      ...selfSignedCertificate({ cn: 'edge.example.com' }),
    });
    const { group } = await inboundOn(node.id, {
      network: 'tcp',
      security: 'tls',
      tls: { certificate_id: cert.id, server_names: ['edge.example.com'] },
    });
    edge = { node, agent, group };
    agent.connect();
    const online = cause('node.online', { node_id: node.id, name: node.name, offline_since: null, agent_version: OLD_AGENT });
    await caughtUp(node.id);

    // New material by PATCH: the node's next revision carries it, and once applied the node serves it.
    const renewedPem = selfSignedCertificate({ cn: 'edge.example.com', days: 90 });
    const replaced = await api('patch', `/api/v1/certificates/${cert.id}`, renewedPem);
    const carrying = Number((await nodeRow(g, node.id)).desired_revision);
    await caughtUp(node.id);
    const served = cause('node.certificate_served', {
      node_id: node.id,
      name: node.name,
      certificate_id: cert.id,
      domains: ['edge.example.com'],
      not_after: replaced.not_after,
      revision: carrying,
    });

    // An upgrade asked from the panel that the agent could not make.
    const upgrade = await api('post', `/api/v1/nodes/${node.id}/upgrade-agent`);
    await agent.waitFor(() => agent.commands.some((c) => c.commandId === upgrade.command_id));
    agent.send({
      upgradeResult: { commandId: upgrade.command_id, success: false, error: 'checksum mismatch', agentVersion: OLD_AGENT },
    });
    const upgradeFailed = cause('node.agent_upgrade_failed', {
      node_id: node.id,
      name: node.name,
      version: AGENT_RELEASE,
      agent_version: OLD_AGENT,
      error: 'checksum mismatch',
    });

    // A revision the engine refuses, then one it runs.
    agent.failApplyWith = V2RAY_WORDS;
    await inboundOn(node.id);
    const failedRevision = Number((await nodeRow(g, node.id)).desired_revision);
    await agent.waitForRevision(BigInt(failedRevision));
    const applyFailed = cause('node.apply_failed', {
      node_id: node.id,
      name: node.name,
      revision: failedRevision,
      applied_revision: carrying,
      error: V2RAY_WORDS,
      failing_since: g.s.clock.now().toISOString(),
    });
    await arrived(applyFailed);
    agent.failApplyWith = null;
    await inboundOn(node.id);
    const fixed = Number((await nodeRow(g, node.id)).desired_revision);
    await caughtUp(node.id);
    const recovered = cause('node.apply_recovered', {
      node_id: node.id,
      name: node.name,
      revision: fixed,
      failed_revision: failedRevision,
      failing_since: g.s.clock.now().toISOString(),
    });

    await arrived(outdated, online, served, upgradeFailed, recovered);
  });

  it('usage reported by agents: a subscription past 80% and 100% of its limit, then limited; a node at its quota limited, lifted when raised', async () => {
    const { node, agent, group } = edge;
    const owner = await client('traffic');
    const sub = await api('post', '/api/v1/subscriptions', {
      client_id: owner.id,
      access_group_ids: [group.id],
      traffic_limit_bytes: 10_000,
      renewal: 'no_reset',
    });
    const subject = { subscription_id: sub.id, client_id: owner.id, traffic_limit_bytes: 10_000 };
    await caughtUp(node.id);
    await agent.sendUsage(1n, [{ subscriptionId: sub.id, uplinkBytes: 3_000n, downlinkBytes: 5_000n }]);
    const p80 = cause('subscription.traffic_80_percent', { ...subject, used_bytes: 8_000, resets_at: null });
    await arrived(p80);
    await agent.sendUsage(2n, [{ subscriptionId: sub.id, uplinkBytes: 500n, downlinkBytes: 1_500n }]);
    const p100 = cause('subscription.traffic_100_percent', { ...subject, used_bytes: 10_000, resets_at: null });
    // Written down by the credit of report 2 itself, in its own commit.
    const limited = cause('subscription.limited', { ...subject, used_bytes: 10_000 });
    await arrived(p100, limited);
    expect((await api('get', `/api/v1/subscriptions/${sub.id}`)).status).toBe('limited');

    // Issue 36: the agent cut it on its own (its slice ran out) and reports the cut; recorded once.
    await agent.sendCutoffs(1n, [
      {
        subscriptionId: sub.id,
        reason: CutoffReason.CUTOFF_SLICE,
        atMs: BigInt(g.s.clock.now().getTime()),
        sliceId: 1n,
        sliceUsedBytes: 10_000n,
      },
    ]);
    const cutOff = cause('subscription.cut_off_by_node', {
      subscription_id: sub.id,
      client_id: owner.id,
      node_id: node.id,
      reason: 'slice',
      slice_id: 1,
      slice_used_bytes: 10_000,
    });
    await arrived(cutOff);

    // A node whose quota (raw bytes, never reset) one report reaches; raising the quota brings it back.
    const quota = await enrolled();
    const { group: quotaGroup } = await inboundOn(quota.node.id);
    const rider = await client('rider');
    const riderSub = await api('post', '/api/v1/subscriptions', { client_id: rider.id, access_group_ids: [quotaGroup.id] });
    quota.agent.connect();
    await caughtUp(quota.node.id);
    await api('patch', `/api/v1/nodes/${quota.node.id}`, { traffic_quota_bytes: 10_000, traffic_quota_renewal: 'no_reset' });
    await quota.agent.sendUsage(1n, [{ subscriptionId: riderSub.id, uplinkBytes: 4_000n, downlinkBytes: 6_000n }]);
    const nodeLimited = cause('node.traffic_limited', {
      node_id: quota.node.id,
      name: quota.node.name,
      period_bytes: 10_000,
      quota_bytes: 10_000,
      resets_at: null,
    });
    await arrived(nodeLimited);
    await api('patch', `/api/v1/nodes/${quota.node.id}`, { traffic_quota_bytes: 20_000 });
    const lifted = cause('node.traffic_limit_lifted', {
      node_id: quota.node.id,
      name: quota.node.name,
      reason: 'quota changed',
      period_bytes: 10_000,
      quota_bytes: 20_000,
      limited_since: g.s.clock.now().toISOString(),
    });
    await arrived(lifted);
  });

  it('time on the test clock: a node away past the grace is announced offline by nodes.presence-sweep and online when back; a subscription past its expiry is expired by subscriptions.sweep', async () => {
    const { node, agent } = await enrolled();
    agent.connect();
    const first = cause('node.online', { node_id: node.id, name: node.name, offline_since: null });
    await caughtUp(node.id);
    const owner = await client('expiring');
    const sub = await api('post', '/api/v1/subscriptions', {
      client_id: owner.id,
      access_group_ids: [],
      expires_at: new Date(g.s.clock.now().getTime() + 60_000).toISOString(),
    });
    await arrived(first);

    await agent.disconnect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('offline'));
    const since = new Date((await nodeRow(g, node.id)).last_seen_at as Date).toISOString();
    // Nothing in flight when the clock moves (a delivery's lease is on the same clock).
    await settled();
    g.s.clock.advance(2 * 60_000);
    await g.s.deps.jobs.enqueue(JOBS.nodesPresenceSweep, {});
    await g.s.deps.jobs.enqueue(JOBS.subscriptionsSweep, {});
    const offline = cause('node.offline', { node_id: node.id, name: node.name, offline_since: since, grace_seconds: GRACE_SECONDS });
    const expired = cause('subscription.expired', { subscription_id: sub.id, client_id: owner.id, expires_at: sub.expires_at });
    await arrived(offline, expired);

    agent.connect();
    const back = cause('node.online', { node_id: node.id, name: node.name, offline_since: since });
    await arrived(back);
  });

  it('each cause’s event reached the all-types endpoint exactly once, signed, version 1, its data as the catalogue says; every event reached it once, the subset endpoint only its types; the types seen are the catalogue’s', async () => {
    await settled();
    // Late copies would show here.
    await new Promise((r) => setTimeout(r, 500));
    const recorded = await g.s.deps.db.selectFrom('events').select(['id', 'type']).execute();

    for (const endpoint of ['all', 'subset'] as const) {
      const got = deliveredTo(endpoint);
      for (const d of got) {
        const { envelope } = d;
        const signed = verifyWebhookSignature(hooks[endpoint].secret, d.body, d.signature, { now: d.at });
        expect(signed, `${endpoint}: ${envelope.type} ${envelope.id} signed`).toBe(true);
        expect(d.eventHeader).toBe(envelope.type);
        expect(EVENT_TYPES).toContain(envelope.type);
        expect(envelope.version).toBe(1);
        expect(envelope.version).toBe(EVENT_VERSION[envelope.type]);
        // The schema strips nothing and adds nothing: the payload is exactly the catalogue's shape.
        expect(EVENT_CATALOGUE[envelope.type].parse(envelope.data), envelope.type).toEqual(envelope.data);
      }
      const ids = got.map((d) => d.envelope.id);
      expect(new Set(ids).size, `${endpoint}: an event delivered twice`).toBe(ids.length);
      const owed = recorded.filter((e) => endpoint === 'all' || SUBSET.includes(e.type as EventType)).map((e) => e.id);
      expect([...ids].sort()).toEqual(owed.sort());
    }
    expect(new Set(deliveredTo('subset').map((d) => d.envelope.type))).toEqual(new Set(SUBSET));

    for (const c of causes) {
      const mine = deliveredTo('all').filter((d) => matches(d.envelope, c));
      expect(mine.length, `${c.type} ${JSON.stringify(c.data)}`).toBe(1);
    }
    const seen = new Set(deliveredTo('all').map((d) => d.envelope.type));
    expect(seen).toEqual(new Set(EVENT_TYPES));
    expect(new Set(causes.map((c) => c.type))).toEqual(new Set(EVENT_TYPES));
  });
});
