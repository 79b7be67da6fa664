import { X509Certificate } from 'node:crypto';
import http2 from 'node:http2';
import { ChannelCredentials } from '@grpc/grpc-js';
import { TEXT_RULE } from '@svc/domain';
import { ControlPlaneDefinition, type EnrollRequest, LogSource } from '@svc/proto';
import { makeCsr } from '@svc/testkit/agent-simulator';
import { ClientError, createChannel, createClient, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appliedRevisionWriter } from '../src/applied-revisions.ts';
import { ENROLL_MAX_BYTES } from '../src/inbound-guard.ts';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * What agents (and anyone reaching the gateway port) send that the gateway must refuse
 * (issue 12: items 1, 5, 8), through real gRPC over TLS, and raw HTTP/2 where a gRPC client
 * would not send the bytes (a length prefix without its message, garbage compressed data).
 */
const SYNC_MAX = 1024 * 1024;
let g: Gateway;
let port: number;
let channel: ReturnType<typeof createChannel>;
let client: ReturnType<typeof createClient<typeof ControlPlaneDefinition>>;

beforeAll(async () => {
  g = await startGateway({ gateway: { maxReceiveMessageBytes: SYNC_MAX } });
  port = Number(g.endpoint.split(':')[1]);
  // No client certificate; the client itself sends whatever size it is given.
  channel = createChannel(g.endpoint, ChannelCredentials.createSsl(Buffer.from(g.caCertPem)), { 'grpc.max_send_message_length': -1 });
  client = createClient(ControlPlaneDefinition, channel);
});
afterAll(async () => {
  channel.close();
  await g.stop();
});

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
    return { code: 'OK', details: '' };
  } catch (err) {
    if (err instanceof ClientError) return { code: Status[err.code], details: err.details };
    throw err;
  }
};

const enrollWith = async (over: Partial<EnrollRequest> = {}) => {
  const { node, enrollToken } = await g.nodeWithToken();
  const req = { token: enrollToken, csrPem: (await makeCsr()).csrPem, hostname: 'edge', agentVersion: '1.0.0', ...over };
  return { node, req };
};

/** One raw HTTP/2 gRPC call over TLS without a client certificate: headers, the given body bytes, then waits for the status. */
function rawCall(path: string, body: Buffer, opts: { headers?: Record<string, string>; endStream?: boolean } = {}) {
  return new Promise<{ status: string; message: string }>((resolve, reject) => {
    const session = http2.connect(`https://localhost:${port}`, { ca: g.caCertPem });
    session.on('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...opts.headers,
    });
    // Resolved on the status, while the request side may still be open (a message not sent in full).
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] === undefined) return;
      resolve({ status: Status[Number(h['grpc-status'])] as string, message: decodeURIComponent(String(h['grpc-message'] ?? '')) });
      req.close();
      session.close();
    };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', () => {});
    req.on('error', () => {});
    req.on('close', () => {
      session.close();
      reject(new Error('stream closed without a grpc-status'));
    });
    if (opts.endStream === false) req.write(body);
    else req.end(body);
  });
}

/** gRPC framing: compressed flag, 4-byte length, bytes (`declared` may claim more than is sent). */
const frame = (bytes: Buffer, o: { compressed?: boolean; declared?: number } = {}) => {
  const head = Buffer.alloc(5);
  head.writeUInt8(o.compressed ? 1 : 0, 0);
  head.writeUInt32BE(o.declared ?? bytes.length, 1);
  return Buffer.concat([head, bytes]);
};

const online = async (nodeId: string) => eventually(async () => expect((await nodeRow(g, nodeId)).connectivity).toBe('online'));

const ENROLL = '/svc.controlplane.v1.ControlPlane/Enroll';
const SYNC = '/svc.controlplane.v1.ControlPlane/Sync';

describe('Enroll, open to anyone, receives at most 16 KiB (issue 12.5)', () => {
  it('an Enroll of 64 KiB and one of 60 MB without a client certificate are RESOURCE_EXHAUSTED; the token stays usable and the gateway keeps serving', async () => {
    const { node, req } = await enrollWith();
    for (const size of [64 * 1024, 60 * 1024 * 1024]) {
      const r = await refusal(client.enroll({ ...req, hostname: 'h'.repeat(size) }));
      expect(r.code, r.details).toBe('RESOURCE_EXHAUSTED');
      expect(r.details).toContain(String(ENROLL_MAX_BYTES));
    }
    const ok = await client.enroll(req);
    expect(ok.nodeId).toBe(node.id);
  });

  it('is refused from the length prefix, before the message arrives: a prefix claiming 64 KiB or 60 MB with 10 bytes sent is answered at once', async () => {
    for (const declared of [64 * 1024, 60 * 1024 * 1024]) {
      const r = await rawCall(ENROLL, frame(Buffer.alloc(10), { declared }), { endStream: false });
      expect(r.status, r.message).toBe('RESOURCE_EXHAUSTED');
    }
  });

  it('a gzip bomb is refused at 16 KiB decompressed (the limit applies after decompression too)', async () => {
    const { gzipSync } = await import('node:zlib');
    // 512 KiB inflated: over Enroll's limit, under the Sync limit of this gateway.
    const bomb = gzipSync(Buffer.alloc(512 * 1024));
    expect(bomb.length).toBeLessThan(ENROLL_MAX_BYTES);
    const r = await rawCall(ENROLL, frame(bomb, { compressed: true }), { headers: { 'grpc-encoding': 'gzip' } });
    expect(r.status, r.message).toBe('RESOURCE_EXHAUSTED');
  });
});

describe('Sync: the large limit only for authenticated agents, and bounded per message (issue 12.5)', () => {
  it('Sync without a client certificate is UNAUTHENTICATED from its headers, its message still arriving', async () => {
    const r = await rawCall(SYNC, frame(Buffer.alloc(10), { declared: 60 * 1024 * 1024 }), { endStream: false });
    expect(r.status, r.message).toBe('UNAUTHENTICATED');
  });

  it('an AgentMessage over grpc.max_receive_message_bytes ends the stream with RESOURCE_EXHAUSTED', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    const entries = Array.from({ length: 30_000 }, (_, i) => ({
      subscriptionId: `sub_${String(i).padStart(26, '0')}`,
      uplinkBytes: 1n,
      downlinkBytes: 1n,
    }));
    agent.send({ usage: { reportId: 1n, entries } });
    expect((await agent.waitForEnd()).code).toBe(Status.RESOURCE_EXHAUSTED);
  });

  it('a Hello over its kind bound (16 KiB) is RESOURCE_EXHAUSTED naming hello, and nothing of it is stored', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect({
      skipHello: {
        hello: { hostname: 'h'.repeat(20_000), os: 'linux', arch: 'x64', agentVersion: '1', xrayVersion: '1', appliedRevision: 0n },
      },
    });
    const end = await agent.waitForEnd();
    expect(end.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(end.details).toMatch(/^hello: /);
    expect((await nodeRow(g, node.id)).hostname).toBe('sim-node');
  });
});

describe('the text rule on every field received over gRPC (issue 12.1)', () => {
  it('Enroll with NUL in hostname is INVALID_ARGUMENT naming hostname; nothing changes and the token stays usable', async () => {
    const { node, req } = await enrollWith();
    for (const bad of [{ hostname: 'edge\u0000' }, { agentVersion: '1\u00000' }, { token: `${req.token}\u0000` }]) {
      const r = await refusal(client.enroll({ ...req, ...bad }));
      expect(r.code, r.details).toBe('INVALID_ARGUMENT');
      const field = Object.keys(bad)[0] === 'agentVersion' ? 'agent_version' : Object.keys(bad)[0];
      expect(r.details).toContain(`${field}: ${TEXT_RULE}`);
    }
    expect((await nodeRow(g, node.id)).enroll_token_hash).not.toBeNull();
    expect((await client.enroll(req)).nodeId).toBe(node.id);
  });

  it('a Hello with NUL ends the stream with INVALID_ARGUMENT naming hello.hostname, and nothing of it is stored', async () => {
    const { node, agent } = await g.enrolledAgent();
    const before = await nodeRow(g, node.id);
    agent.connect({
      skipHello: { hello: { hostname: 'x\u0000y', os: 'linux', arch: 'x64', agentVersion: '1', xrayVersion: '1', appliedRevision: 0n } },
    });
    const end = await agent.waitForEnd();
    expect(end).toEqual({ code: Status.INVALID_ARGUMENT, details: `hello.hostname: ${TEXT_RULE}` });
    const after = await nodeRow(g, node.id);
    expect([after.hostname, after.connectivity, after.stream_session]).toEqual([
      before.hostname,
      before.connectivity,
      before.stream_session,
    ]);
  });

  it('an ApplyResult with NUL in its error ends the stream with INVALID_ARGUMENT naming apply_result.error', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    agent.send({ applyResult: { revision: 1n, success: false, error: 'bad\u0000config' } });
    const end = await agent.waitForEnd();
    expect(end).toEqual({ code: Status.INVALID_ARGUMENT, details: `apply_result.error: ${TEXT_RULE}` });
    expect((await nodeRow(g, node.id)).last_apply_error).toBeNull();
  });

  it('log lines with NUL are left out of the batch, the rest is delivered and the stream stays open', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    agent.logLines.push(
      { source: LogSource.XRAY, line: 'line 1' },
      { source: LogSource.XRAY, line: 'from a client: \u0000' },
      { source: LogSource.XRAY, line: 'line 3' },
    );
    const res = await g.s.api.get(`/api/v1/nodes/${node.id}/logs?source=xray`, { token: await g.token() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.lines.map((l: { line: string }) => l.line)).toEqual(['line 1', 'line 3']);
    expect(agent.ended).toBeNull();
  });

  it('a request that is not protobuf is INVALID_ARGUMENT, not INTERNAL', async () => {
    const r = await rawCall(ENROLL, frame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])));
    expect(r.status, r.message).toBe('INVALID_ARGUMENT');
  });

  it('a message flagged gzip that does not gunzip is INVALID_ARGUMENT and the gateway stays up (it ended the process)', async () => {
    const r = await rawCall(ENROLL, frame(Buffer.from('not gzip at all'), { compressed: true }), { headers: { 'grpc-encoding': 'gzip' } });
    expect(r.status, r.message).toBe('INVALID_ARGUMENT');
    const { req } = await enrollWith();
    expect((await client.enroll(req)).nodeId).toMatch(/^nod_/);
  });
});

describe('int64 revisions from agents are capped at the desired revision (no statement fails on them)', () => {
  it('a Hello and an ApplyResult claiming revision 2^63-1 open the stream and store the desired revision, not an error', async () => {
    const { node, agent } = await g.enrolledAgent();
    const huge = 2n ** 63n - 1n;
    agent.connect({
      skipHello: { hello: { hostname: 'h', os: 'linux', arch: 'x64', agentVersion: '1', xrayVersion: '1', appliedRevision: huge } },
    });
    await online(node.id);
    const row = await nodeRow(g, node.id);
    expect(Number(row.applied_revision)).toBe(Number(row.desired_revision));
    agent.send({ applyResult: { revision: huge, success: true, error: '' } });
    agent.sendStatus();
    await eventually(async () => expect((await nodeRow(g, node.id)).status).not.toBeNull());
    expect(Number((await nodeRow(g, node.id)).applied_revision)).toBe(Number(row.desired_revision));
    expect(agent.ended).toBeNull();
  });

  it("one node's absurd ApplyResult does not fail the other nodes' results written in the same statement", async () => {
    const [a, b] = [(await g.nodeWithToken()).node.id, (await g.nodeWithToken()).node.id];
    const record = appliedRevisionWriter(g.s.deps);
    await Promise.all([record(a, 1), record(b, Number.MAX_VALUE)]);
    expect([Number((await nodeRow(g, a)).applied_revision), Number((await nodeRow(g, b)).applied_revision)]).toEqual([1, 1]);
  });
});

describe('CertRenewal refused is answered, not the end of the stream (issue 12.8)', () => {
  it('a CSR that is not one is answered with CertIssued.error; the certificate is unchanged and the stream stays open for a good renewal', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    const before = (await nodeRow(g, node.id)).cert_serial;
    const refused = await agent.requestCertificate('not a csr');
    expect(refused.clientCertPem).toBe('');
    expect(refused.error).not.toBe('');
    expect((await nodeRow(g, node.id)).cert_serial).toBe(before);
    const nul = await agent.requestCertificate('-----BEGIN CERTIFICATE REQUEST-----\u0000');
    expect(nul).toEqual({ clientCertPem: '', error: `cert_renewal.csr_pem: ${TEXT_RULE}` });
    expect(agent.ended).toBeNull();
    const pem = await agent.renewCertificate();
    expect(new X509Certificate(pem).subject).toBe(`CN=${node.id}`);
    expect(agent.ended).toBeNull();
  });
});
