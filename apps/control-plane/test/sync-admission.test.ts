import 'reflect-metadata';
import { webcrypto, X509Certificate } from 'node:crypto';
import { ChannelCredentials } from '@grpc/grpc-js';
import * as x509 from '@peculiar/x509';
import { type AgentMessage, ControlPlaneDefinition } from '@svc/proto';
import { AgentSimulator, makeCsr } from '@svc/testkit/agent-simulator';
import { ClientError, createChannel, createClient, Metadata, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

let g: Gateway;
beforeAll(async () => {
  g = await startGateway();
});
afterAll(() => g.stop());

/** Opens Sync with the given credentials, sends `messages`, returns the status it ends with. */
async function syncStatus(creds: ChannelCredentials, messages: AgentMessage[], metadata?: Metadata): Promise<string> {
  const channel = createChannel(g.endpoint, creds);
  try {
    async function* out() {
      for (const m of messages) yield m;
      await new Promise((r) => setTimeout(r, 3000));
    }
    const opts = metadata ? { metadata } : {};
    for await (const _ of createClient(ControlPlaneDefinition, channel).sync(out(), opts)) {
      // drain
    }
    return 'OK';
  } catch (err) {
    return err instanceof ClientError ? Status[err.code] : String(err);
  } finally {
    channel.close();
  }
}

const hello: AgentMessage = {
  hello: { hostname: 'h', os: 'linux', arch: 'x64', agentVersion: '1.0.0', xrayVersion: '25.1.1', appliedRevision: 0n },
};

/** A certificate for `cn` from a CA that is not ours (its own name and key). */
async function foreignCert(cn: string) {
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

describe('Sync admission (spec 4.1 rules 1 and 6, 7.1): UNAUTHENTICATED as a gRPC status, not a TLS failure', () => {
  it('without a client certificate the stream ends UNAUTHENTICATED, while Enroll works on the same port', async () => {
    const creds = ChannelCredentials.createSsl(Buffer.from(g.caCertPem));
    expect(await syncStatus(creds, [hello])).toBe('UNAUTHENTICATED');
    const { enrollToken } = await g.nodeWithToken();
    const channel = createChannel(g.endpoint, creds);
    const res = await createClient(ControlPlaneDefinition, channel).enroll({
      token: enrollToken,
      csrPem: (await makeCsr()).csrPem,
      hostname: 'h',
      agentVersion: '1',
    });
    channel.close();
    expect(res.nodeId).toMatch(/^nod_/);
  });

  it('client metadata imitating the verified identity is stripped: still UNAUTHENTICATED', async () => {
    const { node, agent } = await g.enrolledAgent();
    // Serials are not secret: the imitation names the node's real certificate.
    const cert = new X509Certificate(agent.certPem);
    const md = Metadata();
    md.set('x-svc-node-identity', JSON.stringify({ node_id: node.id, serial: cert.serialNumber.toUpperCase(), not_after: cert.validTo }));
    expect(await syncStatus(ChannelCredentials.createSsl(Buffer.from(g.caCertPem)), [hello], md)).toBe('UNAUTHENTICATED');
    expect((await nodeRow(g, node.id)).connectivity).toBe('offline');
  });

  it('a certificate naming a real node but issued by another CA is UNAUTHENTICATED', async () => {
    const { node } = await g.enrolledAgent();
    const f = await foreignCert(node.id);
    const creds = ChannelCredentials.createSsl(Buffer.from(g.caCertPem), Buffer.from(f.keyPem), Buffer.from(f.certPem));
    expect(await syncStatus(creds, [hello])).toBe('UNAUTHENTICATED');
    expect((await nodeRow(g, node.id)).connectivity).toBe('offline');
  });

  it('a disabled node is UNAUTHENTICATED; enabled again it is admitted', async () => {
    const { node, agent } = await g.enrolledAgent();
    await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token: await g.token() });
    agent.connect();
    expect((await agent.waitForEnd()).code).toBe(Status.UNAUTHENTICATED);
    await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'enabled' }, { token: await g.token() });
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    expect(agent.ended).toBeNull();
  });

  it('a deleted node is UNAUTHENTICATED', async () => {
    const { node, agent } = await g.enrolledAgent();
    expect((await g.s.api.delete(`/api/v1/nodes/${node.id}`, { token: await g.token() })).status).toBe(204);
    agent.connect();
    expect((await agent.waitForEnd()).code).toBe(Status.UNAUTHENTICATED);
  });

  it('disabling a node ends its open stream with UNAUTHENTICATED and sets it offline', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token: await g.token() });
    expect(await agent.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED, details: 'the node is disabled' });
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('offline'));
  });

  it('deleting a node ends its open stream with UNAUTHENTICATED', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    expect((await g.s.api.delete(`/api/v1/nodes/${node.id}`, { token: await g.token() })).status).toBe(204);
    expect(await agent.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED, details: 'the node was deleted' });
  });

  it('enrolling a node again retires the old certificate: its open stream ends and it cannot reconnect', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    const t = await g.token();
    const again = (await g.s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: t })).body.token;
    const fresh = await AgentSimulator.enroll({ endpoint: g.endpoint, caCertPem: g.caCertPem, token: again });
    expect(fresh.nodeId).toBe(node.id);
    expect((await agent.waitForEnd()).code).toBe(Status.UNAUTHENTICATED);
    agent.connect();
    expect((await agent.waitForEnd()).details).toMatch(/enrolled again/);
    fresh.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    await fresh.disconnect();
  });
});

describe('Sync opening (spec 4.1 rule 2): Hello first', () => {
  it('anything else first ends the stream with FAILED_PRECONDITION and the node stays offline', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect({
      skipHello: {
        status: {
          xrayRunning: true,
          cpuPercent: 1,
          memoryUsedBytes: 1n,
          memoryTotalBytes: 2n,
          diskUsedBytes: 1n,
          diskTotalBytes: 2n,
          connections: 0,
          xrayUptimeSeconds: 1n,
          enforcement: undefined,
        },
      },
    });
    expect((await agent.waitForEnd()).code).toBe(Status.FAILED_PRECONDITION);
    expect((await nodeRow(g, node.id)).connectivity).toBe('offline');
  });

  it('Hello is stored on the node view; the node is online while the stream is open and offline after', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    const t = await g.token();
    const view = await eventually(async () => {
      const v = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body;
      expect(v.connectivity).toBe('online');
      return v;
    });
    expect(view).toMatchObject({
      hostname: 'sim-node',
      os: 'linux',
      arch: 'x64',
      agent_version: 'sim-1.0.0',
      xray_version: '25.10.15',
      enrolled: true,
    });
    expect(view.last_seen_at).not.toBeNull();
    await agent.disconnect();
    await eventually(async () => expect((await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body.connectivity).toBe('offline'));
  });

  it('a second stream of the same node replaces the first (ABORTED); the node stays online', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await eventually(async () => expect((await nodeRow(g, node.id)).connectivity).toBe('online'));
    const twin = new AgentSimulator(agent.opts, agent.nodeId, agent.certPem, agent.keyPem);
    twin.connect();
    expect((await agent.waitForEnd()).code).toBe(Status.ABORTED);
    await new Promise((r) => setTimeout(r, 200));
    const row = await nodeRow(g, node.id);
    expect(row.connectivity).toBe('online');
    expect(twin.ended).toBeNull();
    expect(g.gateway.streams).toBeGreaterThan(0);
    await twin.disconnect();
  });
});
