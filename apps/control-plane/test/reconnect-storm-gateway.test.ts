import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { AgentSimulator } from '@svc/testkit/agent-simulator';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 17.3, what a reconnecting fleet costs the gateway: its own listener (a listen backlog
// of its choosing) and a memory of verified client certificates that never stands in for a
// check it would have refused.

const BACKLOG = 1234;
let g: Gateway;
beforeAll(async () => {
  g = await startGateway({ gateway: { listenBacklog: BACKLOG } });
});
afterAll(async () => {
  g.s.clock.set(new Date());
  await g.stop();
});

/** Connects and waits until the gateway admitted the stream (the node row names a new session, online). */
async function admitted(a: AgentSimulator): Promise<void> {
  const before = (await nodeRow(g, a.nodeId)).stream_session;
  a.connect();
  await eventually(async () => {
    const row = await nodeRow(g, a.nodeId);
    expect(row.connectivity).toBe('online');
    expect(row.stream_session).not.toBe(before);
  }, 15_000);
}

/** The same node's agent again (a reconnect: the same certificate, a new stream). */
const again = (a: AgentSimulator) => new AgentSimulator(a.opts, a.nodeId, a.certPem, a.keyPem);

/** The listen backlog of the socket on `port`, as the kernel reports it (ss: Send-Q of a listening socket); null without ss. */
function listenBacklog(port: number): number | null {
  let out: string;
  try {
    out = execFileSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' });
  } catch {
    return null;
  }
  const fields = out.trim().split(/\s+/);
  return Number(fields[2]);
}

const somaxconn = (): number | null => {
  try {
    return Number(execFileSync('sysctl', ['-n', 'net.core.somaxconn'], { encoding: 'utf8' }).trim());
  } catch {
    return null;
  }
};

describe('the agent port (issue 17.3)', () => {
  it.skipIf(process.platform !== 'linux')(
    'listens with the configured backlog (grpc.listen_backlog), not Node’s 511, and serves Sync over TLS on it',
    async () => {
      const port = Number(g.endpoint.split(':')[1]);
      const max = somaxconn();
      const seen = listenBacklog(port);
      if (seen !== null) expect(seen).toBe(max !== null ? Math.min(BACKLOG, max) : BACKLOG);
      const { node, agent } = await g.enrolledAgent();
      await admitted(agent);
      expect((await nodeRow(g, node.id)).stream_replica).toBe(g.gateway.replicaId);
      await agent.disconnect();
    },
  );
});

describe('verified client certificates are remembered (issue 17.3), never in place of a refusal', () => {
  it('a node disabled after its certificate was verified is still refused UNAUTHENTICATED on its next stream', async () => {
    const { node, agent } = await g.enrolledAgent();
    await admitted(agent);
    await agent.disconnect();
    await g.s.api.patch(`/api/v1/nodes/${node.id}`, { admin_status: 'disabled' }, { token: await g.token() });
    const b = again(agent);
    b.connect();
    expect(await b.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED, details: 'the node is disabled' });
  });

  it('a certificate verified while valid is refused UNAUTHENTICATED once past its validity', async () => {
    const { agent } = await g.enrolledAgent();
    await admitted(agent);
    await agent.disconnect();
    const notAfter = Date.parse(new X509Certificate(agent.certPem).validTo);
    g.s.clock.set(new Date(notAfter + 1000));
    try {
      const b = again(agent);
      b.connect();
      expect(await b.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED });
    } finally {
      g.s.clock.set(new Date());
    }
    // Back within its validity, the same certificate is the node's again.
    await admitted(again(agent));
  });

  it('a certificate never seen before is refused UNAUTHENTICATED when presented past its validity', async () => {
    const { agent } = await g.enrolledAgent();
    g.s.clock.set(new Date(Date.parse(new X509Certificate(agent.certPem).validTo) + 1000));
    try {
      agent.connect();
      expect(await agent.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED });
    } finally {
      g.s.clock.set(new Date());
    }
  });

  it('a certificate signed by another key under our CA’s very name, for the same node and serial, never opens a stream', async () => {
    const { node, agent } = await g.enrolledAgent();
    await admitted(agent);
    const session = (await nodeRow(g, node.id)).stream_session;
    const ourCaName = new X509Certificate(g.caCertPem).subject.replace(/\n/g, ', ');
    const forged = await foreignCert(node.id, new X509Certificate(agent.certPem).serialNumber, ourCaName);
    for (let i = 0; i < 2; i++) {
      const f = new AgentSimulator({ endpoint: g.endpoint, caCertPem: g.caCertPem }, node.id, forged.certPem, forged.keyPem);
      f.connect({ appliedRevision: 0n });
      // Refused by the TLS layer (OpenSSL finds our CA's name and the signature wrong: the
      // connection drops) or, past it, by the identity check: never admitted.
      expect([Status.UNAUTHENTICATED, Status.UNAVAILABLE]).toContain((await f.waitForEnd()).code);
    }
    const row = await nodeRow(g, node.id);
    expect(row.stream_session).toBe(session);
    expect(row.connectivity).toBe('online');
    await agent.disconnect();
  });

  it('a certificate for the same node from another CA is refused UNAUTHENTICATED after the node’s own was verified', async () => {
    const { node, agent } = await g.enrolledAgent();
    await admitted(agent);
    const foreign = await foreignCert(node.id, new X509Certificate(agent.certPem).serialNumber);
    const f = new AgentSimulator({ endpoint: g.endpoint, caCertPem: g.caCertPem }, node.id, foreign.certPem, foreign.keyPem);
    f.connect({ appliedRevision: 0n });
    expect(await f.waitForEnd()).toMatchObject({ code: Status.UNAUTHENTICATED });
    // The node's own stream was not touched by the stranger.
    expect((await nodeRow(g, node.id)).connectivity).toBe('online');
    await agent.disconnect();
  });
});

/** A client certificate for `cn` with this serial, from a CA that is not ours (named `caName`). */
async function foreignCert(cn: string, serial: string, caName = 'CN=somebody else CA'): Promise<{ certPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const sig = { name: 'ECDSA', hash: 'SHA-256' } as const;
  const caKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: caName,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: sig,
    keys: caKeys,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  const leafKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
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
