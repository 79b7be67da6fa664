import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { ResumableChannelCredentials } from '@svc/agent';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { AgentSimulator as Simulator } from '@svc/testkit/agent-simulator';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, type ControlPlaneOptions, createControlPlane } from '../src/server.ts';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 17.3: agents resume their TLS session after a gateway restart and on any replica; the
// resumed stream is admitted by the same checks as a full handshake.

let g: Gateway;
const extra: ControlPlane[] = [];
beforeAll(async () => {
  g = await startGateway();
});
afterAll(async () => {
  for (const x of extra) await x.stop().catch(() => {});
  await g.stop();
});

/** Another gateway process of the same installation (same database and installation key): a replica, or the one restarted. */
async function replica(port = 0, opts: Partial<ControlPlaneOptions> = {}): Promise<{ gateway: ControlPlane; endpoint: string }> {
  const gateway = createControlPlane(g.s.deps, { host: '127.0.0.1', port, tlsHosts: ['localhost', '127.0.0.1'], ...opts });
  extra.push(gateway);
  const started = await gateway.start();
  return { gateway, endpoint: `localhost:${started.port}` };
}

function resumable(a: AgentSimulator): ResumableChannelCredentials {
  const creds = new ResumableChannelCredentials({ caCertPem: a.opts.caCertPem, keyPem: a.keyPem, certPem: a.certPem });
  a.credentials = creds;
  return creds;
}

/** The same node's agent dialling `endpoint` with `creds` (the TLS session travels with the credentials). */
function dialling(a: AgentSimulator, endpoint: string, creds: ResumableChannelCredentials): AgentSimulator {
  const b = new Simulator({ ...a.opts, endpoint }, a.nodeId, a.certPem, a.keyPem);
  b.appliedRevision = a.appliedRevision;
  b.credentials = creds;
  return b;
}

/** Connects and waits until the gateway admitted the stream: the node row names a new stream session, online. */
async function admitted(a: AgentSimulator): Promise<void> {
  const before = (await nodeRow(g, a.nodeId)).stream_session;
  a.connect();
  await eventually(async () => {
    const row = await nodeRow(g, a.nodeId);
    expect(row.connectivity).toBe('online');
    expect(row.stream_session).not.toBe(before);
    expect(row.stream_session).not.toBeNull();
  }, 15_000);
}

describe('TLS session resumption between agent and gateway (issue 17.3)', () => {
  it('a session resumes on the gateway restarted on the same port, and the resumed stream is the node’s', async () => {
    const first = await replica();
    const { node, agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    const a = dialling(agent, first.endpoint, creds);
    await admitted(a);
    expect(creds.handshakes).toEqual({ full: 1, resumed: 0 });
    await a.disconnect();

    // The process restarted: a new server, nothing kept in memory but what the installation derives.
    const port = Number(first.endpoint.split(':')[1]);
    await first.gateway.stop();
    const restarted = await replica(port);
    const b = dialling(agent, restarted.endpoint, creds);
    await admitted(b);
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
    // The identity came from the resumed session's client certificate: this node, held by the new process.
    expect((await nodeRow(g, node.id)).stream_replica).toBe(restarted.gateway.replicaId);
    await b.disconnect();
  });

  it('a ticket one replica issued resumes on another replica of the installation', async () => {
    const other = await replica();
    const { node, agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    await admitted(agent);
    await agent.disconnect();
    const b = dialling(agent, other.endpoint, creds);
    await admitted(b);
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
    expect((await nodeRow(g, node.id)).stream_replica).toBe(other.gateway.replicaId);
    await b.disconnect();
  });

  it('a resumed session of a node disabled since is refused UNAUTHENTICATED, as a full handshake would be', async () => {
    const { node, agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    await admitted(agent);
    await agent.disconnect();
    await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token: await g.token() });
    agent.connect();
    expect(await agent.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED, details: 'the node is disabled' });
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
  });

  it('a resumed session with the certificate of a node enrolled again since is refused UNAUTHENTICATED (the old identity is retired)', async () => {
    const { node, agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    await admitted(agent);
    await agent.disconnect();
    const issued = await g.s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: await g.token() });
    await Simulator.enroll({ endpoint: g.endpoint, caCertPem: g.caCertPem, token: issued.body.token as string });
    agent.connect();
    expect(await agent.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED });
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
  });

  it('a resumed session whose certificate another CA signed is refused UNAUTHENTICATED (resumption skips the handshake’s cryptography, never the admission)', async () => {
    const { node } = await g.enrolledAgent();
    const foreign = await foreignCert(node.id);
    const creds = new ResumableChannelCredentials({ caCertPem: g.caCertPem, ...foreign });
    for (let i = 0; i < 2; i++) {
      const a = new Simulator({ endpoint: g.endpoint, caCertPem: g.caCertPem }, node.id, foreign.certPem, foreign.keyPem);
      a.credentials = creds;
      a.connect({ appliedRevision: 0n });
      expect(await a.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED });
    }
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
  });

  it('with grpc.tls_session_lifetime_seconds 0 the gateway resumes nothing: every handshake is a full one', async () => {
    const off = await replica(0, { tlsSessionLifetimeSeconds: 0 });
    const { agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    for (let i = 0; i < 2; i++) {
      const a = dialling(agent, off.endpoint, creds);
      await admitted(a);
      await a.disconnect();
    }
    expect(creds.handshakes).toEqual({ full: 2, resumed: 0 });
  });

  it('refreshTicket takes a fresh ticket with a full handshake on a side connection; the next stream resumes with it', async () => {
    const { agent } = await g.enrolledAgent();
    const creds = resumable(agent);
    expect(await creds.refreshTicket()).toBe(false); // never connected: nowhere to go
    await admitted(agent);
    await agent.disconnect();
    expect(await creds.refreshTicket()).toBe(true);
    await admitted(agent);
    expect(creds.handshakes).toEqual({ full: 1, resumed: 1 });
    await agent.disconnect();
  });
});

/** A client certificate for `cn` from a CA that is not ours. */
async function foreignCert(cn: string): Promise<{ certPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const sig = { name: 'ECDSA', hash: 'SHA-256' } as const;
  const caKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=somebody else CA',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: sig,
    keys: caKeys,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  const leafKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=${cn}`,
    issuer: ca.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: sig,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey), 'PRIVATE KEY');
  return { certPem: leaf.toString('pem'), keyPem };
}
