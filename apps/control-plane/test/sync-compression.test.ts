import { connect } from 'node:http2';
import { gunzipSync } from 'node:zlib';
import { AgentMessage, ServerMessage } from '@svc/proto';
import type { AgentSimulator } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, nodeRow, startGateway } from './harness.ts';

// Issue 5, large snapshots: the stream is gzip'd. Watched on the wire with node:http2 (not
// grpc-js, whose client inflates silently): the response's grpc-encoding header and each
// message's compressed flag.

let g: Gateway;
let node: { id: string };
let agent: AgentSimulator;
/** ~85 bytes a user: a DesiredState over grpc.gzip_min_bytes (16 KiB). */
const USERS = 250;
let small: { node: { id: string }; agent: AgentSimulator };

beforeAll(async () => {
  g = await startGateway();
  const t = await g.token();
  const post = async (path: string, body: unknown) => {
    const res = await g.s.api.post(path, body, { token: t });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  ({ node, agent } = await g.enrolledAgent());
  const profile = await post('/api/v1/inbound-profiles', {
    name: 'gz-vless',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: 'gz', inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: 'gz@example.com' });
  for (let i = 0; i < USERS; i++) await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  // A node with three users: its DesiredState (~1 KiB) is under grpc.gzip_min_bytes.
  small = await g.enrolledAgent();
  const smallInbound = await post('/api/v1/inbounds', { node_id: small.node.id, profile_id: profile.id, port: 443 });
  const smallGroup = await post('/api/v1/access-groups', { name: 'gz-small', inbound_ids: [smallInbound.id] });
  for (let i = 0; i < 3; i++) await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [smallGroup.id] });
});
afterAll(() => g.stop());

interface Received {
  headers: Record<string, string | string[] | undefined>;
  compressedFlag: number;
  wireBytes: number;
  message: ServerMessage;
}

/** Opens Sync over raw HTTP/2 + mTLS, sends Hello, and reads the first DesiredState the gateway sends. */
async function firstMessage(acceptEncoding: string, who: AgentSimulator = agent): Promise<Received> {
  const session = connect(`https://${g.endpoint}`, {
    ca: g.caCertPem,
    cert: who.certPem,
    key: who.keyPem,
    servername: 'localhost',
  });
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/svc.controlplane.v1.ControlPlane/Sync',
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-accept-encoding': acceptEncoding,
    });
    const hello = AgentMessage.encode({
      hello: { hostname: 'raw', os: 'linux', arch: 'x64', agentVersion: '1.0.0', xrayVersion: '25.10.15', appliedRevision: 0n },
    }).finish();
    const frame = Buffer.alloc(5 + hello.length);
    frame.writeUInt32BE(hello.length, 1);
    Buffer.from(hello).copy(frame, 5);
    stream.write(frame);
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve) => stream.once('response', resolve));
    // Frames until the first DesiredState: the ServerClock (docs/limits.md) comes before it.
    let buf = Buffer.alloc(0);
    for await (const chunk of stream) {
      buf = Buffer.concat([buf, chunk as Buffer]);
      while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
        const flag = buf.readUInt8(0);
        const body = buf.subarray(5, 5 + buf.readUInt32BE(1));
        const message = ServerMessage.decode(flag === 1 ? gunzipSync(body) : body);
        if (message.desiredState) {
          stream.close();
          return { headers, compressedFlag: flag, wireBytes: body.length, message };
        }
        buf = buf.subarray(5 + body.length);
      }
    }
    throw new Error('the stream ended before a DesiredState');
  } finally {
    session.close();
  }
}

describe('DesiredState on the wire is gzip-compressed for agents that accept gzip', () => {
  it('a client accepting gzip gets grpc-encoding gzip and a compressed message that inflates to the full DesiredState', async () => {
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);
    const gz = await firstMessage('identity,deflate,gzip');
    expect(gz.headers['grpc-encoding']).toBe('gzip');
    expect(gz.compressedFlag).toBe(1);
    expect(gz.message.desiredState?.revision).toBe(desired);
    expect(gz.message.desiredState?.config?.xray?.inbounds[0]?.users).toHaveLength(USERS);

    const plain = await firstMessage('identity');
    expect(plain.headers['grpc-encoding']).toBe('identity');
    expect(plain.compressedFlag).toBe(0);
    expect(plain.message).toEqual(gz.message);
    expect(gz.wireBytes, 'gzip makes the snapshot smaller').toBeLessThan(plain.wireBytes / 2);
  });

  it('a DesiredState under grpc.gzip_min_bytes goes uncompressed even to a client accepting gzip (deflating ~1 KiB costs more CPU than its bytes are worth)', async () => {
    const got = await firstMessage('identity,deflate,gzip', small.agent);
    expect(got.compressedFlag).toBe(0);
    expect(got.wireBytes).toBeLessThan(16 * 1024);
    expect(got.message.desiredState?.config?.xray?.inbounds[0]?.users).toHaveLength(3);
  });

  it('the grpc-js agent (which accepts gzip) receives and decodes the same snapshot', async () => {
    agent.connect();
    const desired = BigInt((await nodeRow(g, node.id)).desired_revision);
    await agent.waitForRevision(desired);
    expect(agent.desiredStates.at(-1)?.config?.xray?.inbounds[0]?.users).toHaveLength(USERS);
  });
});
