import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A layer-4 load balancer for tests, as operators put in front of gateway replicas: each
 * connection goes to the backend with the fewest open connections (taking turns among
 * equals); a backend that refuses the connection is
 * skipped (as a balancer's health check would), and a connection whose backend dies is cut,
 * so the client reconnects and lands on a living one. TLS passes through untouched.
 */
export interface TcpBalancer {
  port: number;
  /** Backend ports, in turn order; may be changed while running. */
  backends: number[];
  /** Connections currently open to each backend port. */
  open(port: number): number;
  close(): Promise<void>;
}

export async function startTcpBalancer(backends: number[]): Promise<TcpBalancer> {
  const sockets = new Set<Socket>();
  const perBackend = new Map<number, number>();
  let next = 0;
  const balancer: TcpBalancer = {
    port: 0,
    backends,
    open: (port) => perBackend.get(port) ?? 0,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    client.pause();
    const tried = new Set<number>();
    const attempt = () => {
      // Least connections first, taking turns among equals.
      const start = next++;
      const order = balancer.backends
        .map((port, i) => ({ port, turn: (i - (start % balancer.backends.length) + balancer.backends.length) % balancer.backends.length }))
        .filter((b) => !tried.has(b.port))
        .sort((a, b) => balancer.open(a.port) - balancer.open(b.port) || a.turn - b.turn);
      const port = order[0]?.port;
      if (port === undefined) {
        client.destroy();
        return;
      }
      tried.add(port);
      const upstream = connect({ port, host: '127.0.0.1' });
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        sockets.add(upstream);
        perBackend.set(port, (perBackend.get(port) ?? 0) + 1);
        upstream.once('close', () => {
          sockets.delete(upstream);
          perBackend.set(port, (perBackend.get(port) ?? 1) - 1);
          client.destroy();
        });
        client.once('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on('error', () => {
        if (!connected) attempt();
      });
    };
    attempt();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  balancer.port = typeof address === 'object' && address ? address.port : 0;
  return balancer;
}
