import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { AgentMessage } from '@svc/proto';
import { httpGetThroughProxy, type ProxiedStream, streamThroughProxy } from '@svc/testkit';
import { type EngineProcess, freePort, startV2ray } from '@svc/testkit/engine-process';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionBook } from '../../src/connections/access-log.ts';
import { LiveConnections } from '../../src/connections/live-connections.ts';
import { destroyExact, socketControlMissing } from '../../src/connections/socket-table.ts';
import { DeviceEnforcer } from '../../src/devices/device-enforcer.ts';
import { type CountingServer, skipReason as noV2ray, sleep, startCountingServer } from './loop.ts';

/**
 * Device limits on live connections with Debian's v2ray as the engine and real v2ray clients
 * over loopback addresses: user A (device_limit 2) from 127.0.0.2, 127.0.0.3 and then 127.0.0.4;
 * user B from 127.0.0.4 too. The agent's pieces run as the agent wires them (engine output ->
 * access-log book -> LiveConnections -> DeviceEnforcer, ss for the socket table and ss -K to end
 * sockets), with the limits handed in as the desired state's user_limits would be. (The whole
 * loop with the control plane emitting user_limits is the coordinator's test.)
 */
const GRACE_MS = 3000;
const missing = noV2ray ?? (await socketControlMissing());
if (missing) console.warn(`device-limit end-to-end test skipped: ${missing}`);

const A = 'subA';
const B = 'subB';
const users = { [A]: randomUUID(), [B]: randomUUID() };

let dest: CountingServer;
let server: EngineProcess;
let client: EngineProcess;
let enforcer: DeviceEnforcer;
let live: LiveConnections;
const sent: AgentMessage[] = [];
/** The client's HTTP proxy port per route (user and source address). */
const proxy: Record<string, number> = {};

beforeAll(async () => {
  if (missing) return;
  dest = await startCountingServer();
  const port = await freePort();
  server = await startV2ray(
    {
      log: { loglevel: 'warning' },
      inbounds: [
        {
          tag: 'vmess-tcp',
          listen: '127.0.0.1',
          port,
          protocol: 'vmess',
          settings: { clients: Object.entries(users).map(([id, uuid]) => ({ id: uuid, alterId: 0, email: `${id}@svc` })) },
        },
      ],
      outbounds: [{ protocol: 'freedom' }],
    },
    { waitForPorts: [port], name: 'device-limit-node' },
  );
  const book = new ConnectionBook();
  live = new LiveConnections({ ports: () => [port] });
  createInterface({ input: server.child.stdout as NodeJS.ReadableStream }).on('line', (line) => live.seen(book.see(line)));
  enforcer = new DeviceEnforcer({
    live,
    ports: () => [port],
    send: (m) => {
      sent.push(m);
      return true;
    },
    log: pino({ level: 'silent' }),
    graceMs: GRACE_MS,
    denialGraceMs: GRACE_MS,
    // Scaled down with the grace (defaults 17 s and 20 s): the streams' clients ACK all the time.
    lingerMs: 2000,
    everyMs: 500,
    reportEveryMs: 500,
  });
  enforcer.setLimits([{ subscriptionId: A, deviceLimit: 2, uploadBps: 0n, downloadBps: 0n, notAfterMs: 0n, sliceId: 0n, sliceBytes: 0n }]);
  await enforcer.start();

  const routes = [
    ['A2', A, '127.0.0.2'],
    ['A3', A, '127.0.0.3'],
    ['A4', A, '127.0.0.4'],
    ['B4', B, '127.0.0.4'],
  ] as const;
  for (const [name] of routes) proxy[name] = await freePort();
  client = await startV2ray(
    {
      log: { loglevel: 'warning' },
      inbounds: routes.map(([name]) => ({ tag: `in-${name}`, listen: '127.0.0.1', port: proxy[name], protocol: 'http', settings: {} })),
      outbounds: routes.map(([name, user, from]) => ({
        tag: `out-${name}`,
        protocol: 'vmess',
        sendThrough: from,
        settings: { vnext: [{ address: '127.0.0.1', port, users: [{ id: users[user], alterId: 0, security: 'auto' }] }] },
      })),
      routing: { rules: routes.map(([name]) => ({ type: 'field', inboundTag: [`in-${name}`], outboundTag: `out-${name}` })) },
    },
    { waitForPorts: Object.values(proxy), name: 'device-limit-clients' },
  );
}, 60_000);

afterAll(async () => {
  enforcer?.stop();
  await client?.stop();
  await server?.stop();
  await dest?.close();
});

const open = async (route: string): Promise<ProxiedStream> => {
  const s = streamThroughProxy(proxy[route] as number, `${dest.url}/stream`);
  expect((await s.opened).status, route).toBe(200);
  return s;
};

const flowing = async (s: ProxiedStream, what: string) => {
  const before = s.received();
  await sleep(600);
  expect(s.received(), `${what} keeps receiving`).toBeGreaterThan(before);
};

const lastReport = () => sent.filter((m) => m.devices).at(-1)?.devices?.users ?? [];

describe.skipIf(missing)('device limit on live connections (v2ray, loopback addresses)', () => {
  it('a user with device_limit 2 keeps two devices while the third address is refused and its open connection ends within seconds; another user on that address keeps working', async () => {
    const a2 = await open('A2');
    const a3 = await open('A3');
    const b4 = await open('B4');
    await sleep(1200);
    // The third device of A: tolerated for the grace, then its open connection ends.
    const a4 = await open('A4');
    const openedAt = Date.now();
    const end = await Promise.race([a4.ended, sleep(GRACE_MS + 10_000).then(() => null)]);
    expect(end, 'A’s connection from the third address ended').not.toBeNull();
    const seconds = (Date.now() - openedAt) / 1000;
    expect(seconds).toBeGreaterThanOrEqual((GRACE_MS - 1000) / 1000);
    expect(seconds).toBeLessThan(GRACE_MS / 1000 + 5);
    expect(end?.cut).toBe(true);
    // A's two devices and B on the very address A was refused from keep their connections.
    await flowing(a2, 'A from 127.0.0.2');
    await flowing(a3, 'A from 127.0.0.3');
    await flowing(b4, 'B from 127.0.0.4');

    // Refused: every new connection of A from 127.0.0.4 ends as soon as the engine logs it.
    for (let k = 0; k < 3; k++) {
      const again = streamThroughProxy(proxy.A4 as number, `${dest.url}/stream`);
      const t0 = Date.now();
      const ended = await Promise.race([again.ended, sleep(5000).then(() => null)]);
      expect(ended, 'a new connection from the refused address ends').not.toBeNull();
      console.info(`refused connection ${k + 1} ended after ${Date.now() - t0} ms, ${ended?.bytes ?? 0} bytes`);
      expect(ended?.bytes ?? 0).toBeLessThan(16 * 1024);
    }
    // What "refused" cannot do: the engine accepts, reads the request and relays it before its
    // access line reaches the agent; a request answered within those milliseconds (here a
    // 10-byte answer from a loopback server) completes before the reset. Printed, not asserted.
    {
      let ok = 0;
      for (let k = 0; k < 10; k++) {
        const r = await httpGetThroughProxy(proxy.A4 as number, `${dest.url}/bytes/10`, { signal: AbortSignal.timeout(3000) }).catch(
          () => null,
        );
        if (r?.status === 200 && r.bytes === 10) ok++;
      }
      console.info(`quick GETs from the refused address answered before their reset: ${ok}/10`);
    }
    // New connections of the kept devices and of B on the same address work.
    expect((await httpGetThroughProxy(proxy.A2 as number, `${dest.url}/bytes/100`)).status).toBe(200);
    expect((await httpGetThroughProxy(proxy.A3 as number, `${dest.url}/bytes/100`)).status).toBe(200);
    expect((await httpGetThroughProxy(proxy.B4 as number, `${dest.url}/bytes/100`)).status).toBe(200);
    await flowing(b4, 'B from 127.0.0.4');

    // DeviceReport: the whole picture, refused devices left out.
    await sleep(1200);
    const report = lastReport();
    expect(report.find((u) => u.subscriptionId === A)?.addresses).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(report.find((u) => u.subscriptionId === B)?.addresses).toEqual(['127.0.0.4']);
    expect(enforcer.enforcement()).toEqual({ deviceLimits: true, deviceLimitsError: '', deviceSource: 'access-log' });

    // One of A's devices leaves: the refused address gets the free place at its next connection.
    // (v2ray's client keeps its connection to the node after the local request is closed: the
    // device leaving is its connections at the node ending, as when a phone drops off a network.)
    a3.close();
    const gone = live.snapshot?.byUser.get(`${A}@svc`)?.filter((c) => c.host === '127.0.0.3') ?? [];
    expect(gone.length).toBeGreaterThan(0);
    expect(await destroyExact(gone)).toBe(gone.length);
    await sleep(6000);
    const back = await open('A4');
    await flowing(back, 'A from 127.0.0.4 after 127.0.0.3 left');
    back.close();
    a2.close();
    b4.close();
  });

  it('an address the control plane denies (fleet-wide count) is refused after the denial grace, for that user only', async () => {
    const b4 = await open('B4');
    const a2 = await open('A2');
    await sleep(700);
    enforcer.setDenials([{ subscriptionId: A, addresses: ['127.0.0.2'] }]);
    const end = await Promise.race([a2.ended, sleep(GRACE_MS + 5000).then(() => null)]);
    expect(end, 'A’s connection from the denied address ended').not.toBeNull();
    await flowing(b4, 'B');
    const again = streamThroughProxy(proxy.A2 as number, `${dest.url}/stream`);
    expect(await Promise.race([again.ended, sleep(3000).then(() => null)])).not.toBeNull();
    enforcer.setDenials([]);
    const back = await open('A2');
    await flowing(back, 'A from 127.0.0.2 once the denial is lifted');
    back.close();
    b4.close();
  });
});
