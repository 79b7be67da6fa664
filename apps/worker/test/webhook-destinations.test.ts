import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { mountAdminApi } from '@svc/admin-api';
import { PRIVATE_NETWORKS_SETTING } from '@svc/domain';
import { setupOwner, startTestServer, type TestServer, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type WorkerService } from '../src/worker.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

// Where webhook deliveries may go (issue 29.2; docs/notifications.md, "Where deliveries may go"),
// through the admin API and the real worker: metadata addresses never, loopback (any spelling,
// or a name resolving to it) only once the owner allows private networks, and a failed attempt
// reads the same whatever the connection did.
let s: TestServer;
let worker: WorkerService;
let receiver: WebhookReceiver;
const tcp: TcpServer[] = [];
const sockets: Socket[] = [];
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // '' unsets the testkit's default: the installation setting decides, off until the owner says.
  s = await startTestServer({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' }, mount: mountAdminApi });
  ownerToken = (await setupOwner(s)).access_token;
  worker = createWorker(s.runtime, { sweepEveryMs: 3_600_000, eventsEveryMs: 50, webhooksEveryMs: 50, webhookTimeoutMs: 1000 });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await s?.stop();
  await receiver?.close();
  for (const c of sockets) c.destroy();
  for (const server of tcp) await new Promise((r) => server.close(r));
});

let ownerToken: string;
// The fake clock stands still here: the setup's token stays valid (and sign-ins are rate limited).
const owner = async () => ownerToken;
/** The first attempt of a test delivery to `url`, as the delivery log shows it to the owner. */
async function firstAttempt(url: string): Promise<Record<string, unknown>> {
  const token = await owner();
  const hook = await s.api.post('/api/v1/webhooks', { url }, { token });
  expect(hook.status, hook.text).toBe(201);
  expect((await s.api.post(`/api/v1/webhooks/${hook.body.id}/test`, undefined, { token })).status).toBe(202);
  let delivery: Record<string, unknown> | undefined;
  await until(`the attempt to ${url} written down`, async () => {
    delivery = (await s.api.get(`/api/v1/webhooks/${hook.body.id}/deliveries`, { token })).body.items[0];
    return delivery !== undefined && delivery.attempts === 1 && (delivery.status === 'succeeded' || delivery.last_error !== null);
  });
  return delivery as Record<string, unknown>;
}
const listen = async (server: TcpServer): Promise<number> => {
  tcp.push(server);
  server.on('connection', (c) => sockets.push(c));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
};

const METADATA = ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/latest/meta-data/', 'http://2852039166/'];
const loopback = () => [
  `http://0x7f.0.0.1:${new URL(receiver.url).port}/hooks/svc`,
  `http://localhost:${new URL(receiver.url).port}/hooks/svc`,
];

describe('webhook destinations (admin API + worker)', () => {
  it('a webhook at 169.254.169.254, [::ffff:169.254.169.254], 0x7f.0.0.1 or localhost is refused while private networks are not allowed; the receiver gets nothing', async () => {
    for (const url of METADATA) {
      const d = await firstAttempt(url);
      expect(d, url).toMatchObject({ status: 'pending', last_response_status: null });
      expect(d.last_error, url).toMatch(/^the destination is refused: a link-local address, never allowed$/);
    }
    for (const url of loopback()) {
      const d = await firstAttempt(url);
      expect(d.last_error, url).toBe(
        `the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`,
      );
    }
    expect(receiver.received).toEqual([]);
  });

  it('allowed by the owner: 0x7f.0.0.1 and localhost are delivered, signed; the metadata address stays refused', async () => {
    const res = await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: true }, { token: await owner() });
    expect(res.status, res.text).toBe(200);
    try {
      for (const url of loopback())
        expect(await firstAttempt(url), url).toMatchObject({ status: 'succeeded', last_response_status: 200, last_error: null });
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[0]?.headers['x-svc-signature']).toBeDefined();
      for (const url of METADATA.slice(0, 2))
        expect((await firstAttempt(url)).last_error, url).toMatch(/^the destination is refused: a link-local address/);
    } finally {
      await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: false }, { token: await owner() });
    }
  });

  it('a closed, reset, hung-up or silent port reads "not reachable" to the API, never the connection-level detail', async () => {
    const res = await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: true }, { token: await owner() });
    expect(res.status).toBe(200);
    try {
      const closing = createTcpServer();
      const closed = await listen(closing);
      await new Promise((r) => closing.close(r));
      tcp.splice(tcp.indexOf(closing), 1);
      const ports = [
        closed,
        await listen(createTcpServer((c) => c.resetAndDestroy())),
        await listen(createTcpServer((c) => c.end())),
        await listen(createTcpServer()),
      ];
      const answers = await Promise.all(ports.map((p) => firstAttempt(`http://127.0.0.1:${p}/hooks/svc`)));
      for (const d of answers) expect(d).toMatchObject({ status: 'pending', last_response_status: null, last_error: 'not reachable' });
      expect(JSON.stringify(answers)).not.toMatch(/ECONN|EPIPE|socket|timed out|reset|refused/i);
    } finally {
      await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: false }, { token: await owner() });
    }
  });
});
