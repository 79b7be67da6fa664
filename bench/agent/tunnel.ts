// A user's open connection through the node, to see whether a change drops it: a v2ray client
// (testkit's config, an implementation independent of ours) connects to the node's inbound as one
// user; through its local HTTP proxy a CONNECT tunnel reaches a local echo server and stays open.
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Inbound, InboundUser } from '@svc/proto';
import { freePort, startV2ray } from '@svc/testkit/engine-process';
import { v2rayClientConfig } from '@svc/testkit/v2ray-client-config';
import { onCleanup } from '../common/run.ts';

export interface Tunnel {
  /** Whether the connection has been closed (by either end). */
  readonly closed: boolean;
  /** Sends a line and resolves once it came back; rejects when the connection closes first. */
  roundTrip(): Promise<void>;
  /** Resolves when the connection closes, or with false after `ms`. */
  closedWithin(ms: number): Promise<boolean>;
}

async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onCleanup(async () => void server.close());
  return { server, port: (server.address() as { port: number }).port };
}

/** Opens a tunnel through the node's `inbound` (listening on 127.0.0.1) as `user`. */
export async function openTunnel(inbound: Inbound, user: InboundUser): Promise<Tunnel> {
  const echo = await echoServer();
  const proxyPort = await freePort();
  const client = await startV2ray(v2rayClientConfig([{ proxyPort, server: { address: '127.0.0.1', port: inbound.port }, inbound, user }]), {
    waitForPorts: [proxyPort],
    name: 'bench-client',
  });
  onCleanup(async () => {
    await client.stop();
    // testkit removes the config's directory once the process has exited, which may be after we did.
    await rm(dirname(client.configFile), { recursive: true, force: true });
  });
  const socket: Socket = connect({ host: '127.0.0.1', port: proxyPort });
  await once(socket, 'connect');
  let received = '';
  let closed = false;
  const waiters = new Set<() => void>();
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
    for (const w of waiters) w();
  });
  socket.once('close', () => {
    closed = true;
    for (const w of waiters) w();
  });
  socket.on('error', () => {});
  onCleanup(async () => void socket.destroy());
  const until = (pred: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pred()) {
          waiters.delete(check);
          resolve();
        } else if (closed) {
          waiters.delete(check);
          reject(new Error('the tunnel closed'));
        }
      };
      waiters.add(check);
      check();
    });
  socket.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: 127.0.0.1:${echo.port}\r\n\r\n`);
  await until(() => received.includes('\r\n\r\n'));
  if (!/^HTTP\/1\.[01] 200/.test(received)) throw new Error(`the client proxy answered ${received.split('\r\n')[0]}`);
  received = '';
  let n = 0;
  const tunnel: Tunnel = {
    get closed() {
      return closed;
    },
    async roundTrip() {
      const line = `ping ${++n}\n`;
      received = '';
      socket.write(line);
      await until(() => received === line);
    },
    closedWithin: (ms) =>
      Promise.race([
        until(() => closed).then(
          () => true,
          () => true,
        ),
        new Promise<boolean>((r) => setTimeout(() => r(closed), ms).unref()),
      ]),
  };
  await tunnel.roundTrip();
  return tunnel;
}
