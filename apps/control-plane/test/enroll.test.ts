import 'reflect-metadata';
import { webcrypto, X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { ChannelCredentials } from '@grpc/grpc-js';
import * as x509 from '@peculiar/x509';
import { mountAdminApi } from '@svc/admin-api';
import { ControlPlaneDefinition } from '@svc/proto';
import { login, OWNER, setupOwner, startTestServer, type TestServer } from '@svc/testkit';
import { ClientError, createChannel, createClient, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane } from '../src/server.ts';

let s: TestServer;
let token: string;
let gateway: ReturnType<typeof createControlPlane>;
let client: ReturnType<typeof createClient<typeof ControlPlaneDefinition>>;
let caCertPem: string;
let channel: ReturnType<typeof createChannel>;
let gatewayPort: number;

beforeAll(async () => {
  s = await startTestServer({ mount: mountAdminApi });
  token = (await setupOwner(s)).access_token;
  gateway = createControlPlane(s.deps, { host: '127.0.0.1', port: 0, tlsHosts: ['localhost', '127.0.0.1'] });
  const started = await gateway.start();
  caCertPem = started.caCertPem;
  gatewayPort = started.port;
  channel = createChannel(`127.0.0.1:${started.port}`, ChannelCredentials.createSsl(Buffer.from(caCertPem)));
  client = createClient(ControlPlaneDefinition, channel);
});
afterAll(async () => {
  channel.close();
  await gateway.stop();
  await s.stop();
});

const KEY_KINDS = {
  p256: { gen: { name: 'ECDSA', namedCurve: 'P-256' }, sig: { name: 'ECDSA', hash: 'SHA-256' } },
  rsa: {
    gen: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    sig: { name: 'RSASSA-PKCS1-v1_5' },
  },
} as const;

async function csr(kind: keyof typeof KEY_KINDS = 'p256') {
  const { gen, sig } = KEY_KINDS[kind];
  const keys = (await webcrypto.subtle.generateKey(gen, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=agent', keys, signingAlgorithm: sig })).toString('pem');
}

async function nodeWithToken() {
  // A fresh access token: a test below moves the clock past the enrollment token's 24 h.
  token = (await login(s, OWNER.email, OWNER.password)).access_token;
  const tag = Math.random().toString(36).slice(2, 8);
  const node = (await s.api.post('/api/v1/nodes', { name: `n-${tag}`, address: `${tag}.example.com` }, { token })).body;
  const issued = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
  expect(issued.status, issued.text).toBe(201);
  return { node, enrollToken: issued.body.token as string };
}

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'OK';
  } catch (err) {
    return err instanceof ClientError ? Status[err.code] : String(err);
  }
};

describe('Enroll over TLS without a client certificate (spec 4.1, 5.1, 7.1)', () => {
  it('signs the CSR into a certificate naming the node and returns the CA that pins the server', async () => {
    const { node, enrollToken } = await nodeWithToken();
    const res = await client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'edge-1', agentVersion: '0.1.0' });
    expect(res.nodeId).toBe(node.id);
    expect(res.caCertPem).toBe(caCertPem);
    const cert = new X509Certificate(res.clientCertPem);
    expect(cert.subject).toBe(`CN=${node.id}`);
    expect(cert.verify(new X509Certificate(caCertPem).publicKey)).toBe(true);
    const view = (await s.api.get(`/api/v1/nodes/${node.id}`, { token })).body;
    expect(view).toMatchObject({ hostname: 'edge-1', agent_version: '0.1.0' });
    const audit = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'node.enrolled')
      .where('entity_id', '=', node.id)
      .execute();
    expect(audit[0]).toMatchObject({ actor_type: 'node', actor_id: node.id });
  });

  it('a used token is UNAUTHENTICATED', async () => {
    const { enrollToken } = await nodeWithToken();
    expect(await code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe('OK');
    expect(await code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('an unknown or expired token is UNAUTHENTICATED, and a re-issued token replaces the old one', async () => {
    expect(await code(client.enroll({ token: 'nope', csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe('UNAUTHENTICATED');
    const { node, enrollToken } = await nodeWithToken();
    const reissued = (await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token })).body.token as string;
    expect(await code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe(
      'UNAUTHENTICATED',
    );
    s.clock.advance(25 * 3600_000);
    expect(await code(client.enroll({ token: reissued, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe('UNAUTHENTICATED');
  });

  it('a CSR that is not one is INVALID_ARGUMENT and leaves the token usable', async () => {
    const { enrollToken } = await nodeWithToken();
    expect(await code(client.enroll({ token: enrollToken, csrPem: 'garbage', hostname: 'h', agentVersion: '1' }))).toBe('INVALID_ARGUMENT');
    expect(await code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe('OK');
  });

  it('an RSA key is refused (ECDSA P-256 or Ed25519 only): INVALID_ARGUMENT naming the rule, and the token stays usable', async () => {
    const { enrollToken } = await nodeWithToken();
    const refused = await client.enroll({ token: enrollToken, csrPem: await csr('rsa'), hostname: 'h', agentVersion: '1' }).catch((e) => e);
    expect(refused).toBeInstanceOf(ClientError);
    expect(Status[(refused as ClientError).code]).toBe('INVALID_ARGUMENT');
    expect((refused as ClientError).details).toMatch(/ECDSA P-256 or Ed25519/);
    expect(await code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))).toBe('OK');
  });

  it('two agents racing with one token get one certificate', async () => {
    const { enrollToken } = await nodeWithToken();
    const results = await Promise.all(
      [1, 2, 3].map(async () => code(client.enroll({ token: enrollToken, csrPem: await csr(), hostname: 'h', agentVersion: '1' }))),
    );
    expect(results.sort()).toEqual(['OK', 'UNAUTHENTICATED', 'UNAUTHENTICATED']);
  });
});

describe('Enroll is rate limited per agent IP and per token (spec 5.10 in spirit: refusals cannot flood)', () => {
  it('beyond the limit answers RESOURCE_EXHAUSTED, even for a good token, until the window passes', async () => {
    const { startGateway } = await import('./harness.ts');
    const g = await startGateway({
      server: {
        config: { rate_limits: { enroll: { per_ip: { limit: 3, window_seconds: 60 }, per_subject: { limit: 10, window_seconds: 60 } } } },
      },
    });
    try {
      const ch = createChannel(g.endpoint, ChannelCredentials.createSsl(Buffer.from(g.caCertPem)));
      const c = createClient(ControlPlaneDefinition, ch);
      const attempt = async (t: string) => code(c.enroll({ token: t, csrPem: await csr(), hostname: 'h', agentVersion: '1' }));
      expect([await attempt('bad-1'), await attempt('bad-2'), await attempt('bad-3')]).toEqual(Array(3).fill('UNAUTHENTICATED'));
      const { enrollToken } = await g.nodeWithToken();
      expect(await attempt(enrollToken)).toBe('RESOURCE_EXHAUSTED');
      g.s.clock.advance(61_000);
      expect(await attempt(enrollToken)).toBe('OK');
      ch.close();
      const refusals = await g.s.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'node.enroll_refused').execute();
      expect(refusals).toHaveLength(3);
    } finally {
      await g.stop();
    }
  });
});

describe('the gateway server certificate (issue 4 item 2)', () => {
  const servedCertificate = (port: number) =>
    new Promise<import('node:tls').PeerCertificate>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port, servername: 'localhost', ALPNProtocols: ['h2'], rejectUnauthorized: false },
        () => {
          resolve(socket.getPeerCertificate());
          socket.end();
        },
      );
      socket.on('error', reject);
    });

  it('is signed by the CA for the public hosts, and renewed without a restart when 30 days from expiry', async () => {
    const { startGateway } = await import('./harness.ts');
    const g = await startGateway({ gateway: { tlsHosts: ['cp.example.com', '127.0.0.1'] } });
    try {
      const port = Number(g.endpoint.split(':')[1]);
      const first = await servedCertificate(port);
      expect(first.subjectaltname).toBe('DNS:cp.example.com, IP Address:127.0.0.1');
      expect(new X509Certificate(first.raw).verify(new X509Certificate(g.caCertPem).publicKey)).toBe(true);
      expect(await g.gateway.renewServerCertificate()).toBe(false);
      g.s.clock.advance(61 * 86_400_000);
      expect(await g.gateway.renewServerCertificate()).toBe(true);
      await new Promise((r) => setImmediate(r));
      const second = await servedCertificate(port);
      expect(second.serialNumber).not.toBe(first.serialNumber);
      expect(new Date(second.valid_to).getTime()).toBeGreaterThan(new Date(first.valid_to).getTime());
    } finally {
      await g.stop();
    }
  });
});

describe('the CA can be pinned from the handshake (enroll --ca-sha256)', () => {
  it('the gateway sends its CA after the leaf: an agent with only ca_cert_sha256 finds it, the pin matches, and the CA signed the leaf', async () => {
    const { node } = await nodeWithToken();
    const issued = (await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token })).body;
    // issued.grpc_endpoint names the configured public endpoint; this test's gateway is on gatewayPort.
    const chain = await new Promise<import('node:tls').DetailedPeerCertificate>((resolve, reject) => {
      const socket = tlsConnect(
        {
          host: '127.0.0.1',
          port: gatewayPort,
          servername: 'localhost',
          ALPNProtocols: ['h2'],
          rejectUnauthorized: false,
        },
        () => {
          resolve(socket.getPeerCertificate(true));
          socket.end();
        },
      );
      socket.on('error', reject);
    });
    const leaf = new X509Certificate(chain.raw);
    const issuer = chain.issuerCertificate;
    expect(issuer && issuer !== chain).toBeTruthy();
    const ca = new X509Certificate(issuer.raw);
    expect(ca.fingerprint256.replaceAll(':', '').toLowerCase()).toBe(issued.ca_cert_sha256);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.toString()).toBe(new X509Certificate(caCertPem).toString());
  });
});
