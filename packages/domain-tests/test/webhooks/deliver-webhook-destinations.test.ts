import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { CreateWebhookInput, createWebhook, deliverWebhook, PRIVATE_NETWORKS_SETTING, parseInput, testWebhook } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Where a webhook delivery may go (issue 29.2; docs/notifications.md, "Where deliveries may go"),
// at the verb: the outbound policy applied after the name is resolved, and what the attempt keeps.
let bed: DomainTestbed;
let receiver: Server;
let port: number;
let received = 0;
const servers: Array<Server | TcpServer> = [];
const held: Socket[] = [];
const owner = { type: 'admin' as const, id: 'adm_00000000000000000000000001', role: 'owner' as const };

const listen = async (s: Server | TcpServer): Promise<number> => {
  servers.push(s);
  s.on('connection', (c: Socket) => held.push(c));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as { port: number }).port;
};

beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' } });
  receiver = createServer((_req, res) => {
    received++;
    res.end('thanks');
  });
  port = await listen(receiver);
});
afterAll(async () => {
  for (const s of held) s.destroy();
  for (const s of servers) await new Promise((r) => s.close(r));
  await bed?.close();
});

/** One attempt of a test delivery to `url`; the delivery row after it. */
async function attempt(url: string) {
  const hook = await createWebhook(bed.ctx(owner), parseInput(CreateWebhookInput, { url }));
  const delivery = await testWebhook(bed.ctx(owner), hook.id);
  await deliverWebhook(bed.system(), delivery.id, { timeoutMs: 1000 });
  return bed.deps.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivery.id).executeTakeFirstOrThrow();
}
const allowPrivate = (value: boolean) =>
  bed.deps.db
    .insertInto('settings')
    .values({ key: 'outbound', value: JSON.stringify({ allow_private_networks: value }), updated_at: new Date() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify({ allow_private_networks: value }) }))
    .execute();

describe('webhook delivery under the outbound policy', () => {
  it('a webhook at a metadata address in any spelling is refused, whatever the setting; the attempt names the rule, nothing is sent', async () => {
    for (const allowed of [false, true]) {
      await allowPrivate(allowed);
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/latest/meta-data/',
        'http://2852039166/',
        'http://0xa9fea9fe/',
        'http://[fd00:ec2::254]/',
        'http://100.100.100.200/',
      ]) {
        const row = await attempt(url);
        expect(row, url).toMatchObject({ status: 'pending', last_response_status: null });
        expect(row.last_error, url).toMatch(/^the destination is refused: a (link-local|metadata) address, never allowed$/);
      }
    }
  });

  it('loopback (0x7f.0.0.1, localhost) is refused until the owner allows private networks, then delivered', async () => {
    await allowPrivate(false);
    received = 0;
    for (const url of [`http://0x7f.0.0.1:${port}/hook`, `http://localhost:${port}/hook`, `http://127.1:${port}/hook`]) {
      const row = await attempt(url);
      expect(row.last_error, url).toBe(
        `the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`,
      );
    }
    expect(received).toBe(0);
    await allowPrivate(true);
    for (const url of [`http://0x7f.0.0.1:${port}/hook`, `http://localhost:${port}/hook`]) {
      expect(await attempt(url), url).toMatchObject({ status: 'succeeded', last_response_status: 200, last_error: null });
    }
    expect(received).toBe(2);
  });

  it('a refused, reset, closed or silent port leaves the same words: "not reachable" (which it was maps ports)', async () => {
    await allowPrivate(true);
    const closing = createTcpServer();
    const closed = await listen(closing);
    await new Promise((r) => closing.close(r));
    servers.splice(servers.indexOf(closing), 1);
    const reset = await listen(createTcpServer((s) => s.resetAndDestroy()));
    const hangUp = await listen(createTcpServer((s) => s.end()));
    const silent = await listen(createTcpServer());
    for (const p of [closed, reset, hangUp, silent]) {
      const row = await attempt(`http://127.0.0.1:${p}/hook`);
      expect(row, String(p)).toMatchObject({ status: 'pending', last_response_status: null, last_error: 'not reachable' });
    }
  });

  it('an answer is read only as far as the excerpt; a receiver sending megabytes is still a success', async () => {
    await allowPrivate(true);
    const big = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(4 * 1024 * 1024));
      }),
    );
    expect(await attempt(`http://127.0.0.1:${big}/hook`)).toMatchObject({ status: 'succeeded', last_response_status: 200 });
  });
});
