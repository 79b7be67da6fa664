import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { PRIVATE_NETWORKS_SETTING } from '@svc/domain';
import { setupOwner, type TestServer } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// POST /dns-providers/{id}/check under the outbound policy (issue 29.2; docs/certificates.md,
// "Where the server connects"): an RFC 2136 server at a metadata address is refused in any
// spelling, loopback only once the owner allows private networks; and the check answers the same
// words, after the same time, for a port that refuses, resets, hangs up or stays silent.
const HAVE_BIND = bindAvailable();
let s: TestServer;
let token: string;
let bind: BindServer | undefined;
const tcp: TcpServer[] = [];
const udp: UdpSocket[] = [];
const sockets: Socket[] = [];
beforeAll(async () => {
  // '' unsets the testkit's default: the installation setting decides, off until the owner says.
  s = await startAdminApi({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' } });
  token = (await setupOwner(s)).access_token;
  if (HAVE_BIND) bind = await startBind();
});
afterAll(async () => {
  for (const c of sockets) c.destroy();
  for (const server of tcp) await new Promise((r) => server.close(r));
  for (const socket of udp) socket.close();
  await bind?.stop();
  await s?.stop();
});

let n = 0;
async function provider(server: string, port: string, zone?: string): Promise<string> {
  const credentials = { server, port, key_name: bind?.keyName ?? 'k', key_secret: bind?.secret ?? Buffer.alloc(32, 1).toString('base64') };
  const res = await s.api.post(
    '/api/v1/dns-providers',
    { kind: 'rfc2136', name: `rfc2136 ${++n}`, credentials: zone ? { ...credentials, zone } : credentials },
    { token },
  );
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}
const check = async (id: string, domain = 'example.com') => {
  const res = await s.api.post(`/api/v1/dns-providers/${id}/check`, { domain }, { token });
  expect(res.status, res.text).toBe(200);
  return res.body as { ok: boolean; steps: Array<{ step: string; ok: boolean; detail: string; ms: number }> };
};
const allowPrivate = async (value: boolean) =>
  expect((await s.api.patch('/api/v1/settings/outbound', { allow_private_networks: value }, { token })).status).toBe(200);

describe('RFC 2136 servers a DNS provider check may reach', () => {
  it('169.254.169.254, ::ffff:169.254.169.254, 0x7f.0.0.1 or localhost are refused while private networks are not allowed, naming the rule', async () => {
    const port = String(bind?.port ?? 53);
    for (const server of ['169.254.169.254', '::ffff:169.254.169.254', '2852039166']) {
      const report = await check(await provider(server, port));
      expect(report.ok).toBe(false);
      expect(report.steps[0]?.detail, server).toBe(
        `the DNS server ${server}:${port}: the destination is refused: a link-local address, never allowed`,
      );
    }
    for (const server of ['0x7f.0.0.1', 'localhost']) {
      const report = await check(await provider(server, port));
      expect(report.steps, server).toEqual([
        {
          step: 'add',
          ok: false,
          detail: `the DNS server ${server}:${port}: the destination is refused: a loopback address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`,
          ms: expect.any(Number),
        },
      ]);
    }
  });

  it.skipIf(!HAVE_BIND)(
    'allowed by the owner, the same servers at 0x7f.0.0.1 and localhost pass the check (BIND); the metadata address stays refused',
    async () => {
      const b = bind as BindServer;
      await allowPrivate(true);
      try {
        for (const server of ['0x7f.0.0.1', 'localhost']) {
          const report = await check(await provider(server, String(b.port)), `www.${b.zone}`);
          expect(
            report.steps.map((x) => [x.step, x.ok]),
            server,
          ).toEqual([
            ['add', true],
            ['visible', true],
            ['remove', true],
            ['gone', true],
          ]);
        }
        expect((await check(await provider('::ffff:169.254.169.254', String(b.port)))).steps[0]?.detail).toMatch(/never allowed$/);
      } finally {
        await allowPrivate(false);
      }
    },
  );

  it('a port that refuses, resets, hangs up or stays silent reads the same: "not reachable", after the same 10 s (TCP update and UDP zone lookup alike)', async () => {
    await allowPrivate(true);
    try {
      const listen = async (server: TcpServer) => {
        tcp.push(server);
        server.on('connection', (c) => sockets.push(c));
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        return (server.address() as { port: number }).port;
      };
      const closing = createTcpServer();
      const closed = await listen(closing);
      await new Promise((r) => closing.close(r));
      tcp.splice(tcp.indexOf(closing), 1);
      const reset = await listen(createTcpServer((c) => c.resetAndDestroy()));
      const hangUp = await listen(createTcpServer((c) => c.end()));
      const silent = await listen(createTcpServer());
      // The silent server keeps its UDP port too: the zone lookup (no zone configured) asks there.
      const quiet = createSocket('udp4');
      udp.push(quiet);
      await new Promise<void>((r) => quiet.bind(silent, '127.0.0.1', r));
      const cases: Array<[string, number, string | undefined]> = [
        ['closed, TCP', closed, 'example.com'],
        ['reset, TCP', reset, 'example.com'],
        ['hung up, TCP', hangUp, 'example.com'],
        ['silent, TCP', silent, 'example.com'],
        ['closed, UDP', closed, undefined],
        ['silent, UDP', silent, undefined],
      ];
      const reports = await Promise.all(cases.map(async ([, port, zone]) => check(await provider('127.0.0.1', String(port), zone))));
      const times: number[] = [];
      reports.forEach((report, i) => {
        const [what, port] = cases[i] as [string, number, string | undefined];
        expect(report.steps, what).toEqual([
          { step: 'add', ok: false, detail: `the DNS server 127.0.0.1:${port} is not reachable`, ms: expect.any(Number) },
        ]);
        times.push(report.steps[0]?.ms ?? 0);
      });
      expect(Math.min(...times)).toBeGreaterThanOrEqual(9_900);
      expect(Math.max(...times) - Math.min(...times)).toBeLessThan(1_500);
    } finally {
      await allowPrivate(false);
    }
  }, 60_000);
});
