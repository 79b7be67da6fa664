import { createServer, type RequestListener, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { DomainDeps } from '@svc/domain';
import { createApp } from './app.ts';
import type { AppEnv } from './env.ts';
import { fastListener } from './fast-listener.ts';

export interface HttpService {
  /** `url` reaches the listener from this machine (tests, the setup line); `address` is what the socket is bound to (`0.0.0.0:8080`). */
  start(): Promise<{ port: number; url: string; address: string }>;
  /** Graceful: waits up to `graceMs` for requests in flight. */
  stop(graceMs?: number): Promise<void>;
  app: OpenAPIHono<AppEnv>;
  /** Requests answered by a route's fast path (before Hono) since start. */
  fastAnswered(): number;
}

/**
 * An HTTP listener for a root app with the given surfaces mounted. Used by the admin-api
 * alone and by `svc start`, which mounts every surface on one port.
 */
export function createHttpService(
  deps: DomainDeps,
  mount: (root: OpenAPIHono<AppEnv>) => void,
  /** fastPaths: false sends every request through Hono (tests compare the two). */
  /** extraPorts: also listen on http.extra_ports (the process that answers the subscription links: svc start, the portal). */
  opts: { host?: string; port?: number; fastPaths?: boolean; extraPorts?: boolean } = {},
): HttpService {
  const app = createApp(deps);
  mount(app);
  let server: ServerType | undefined;
  let extra: ServerType[] = [];
  let answered = () => 0;
  const host = opts.host ?? deps.config.http.host;
  const listenOn = (port: number) =>
    new Promise<{ server: ServerType; info: AddressInfo }>((resolve, reject) => {
      const listen = {
        fetch: app.fetch,
        hostname: host,
        port,
        // Routes with a fast path (GET /sub/{token} from its cache) answer before Hono.
        ...(opts.fastPaths === false
          ? {}
          : {
              createServer: ((options: ServerOptions, hono: RequestListener) => {
                const fast = fastListener(app, deps, hono);
                answered = fast.answered;
                return createServer(options, fast.listener);
              }) as typeof createServer,
            }),
      };
      const s: ServerType = serve(listen, (info: AddressInfo) => resolve({ server: s, info }));
      keepAlive(s as { keepAliveTimeout: number; headersTimeout: number });
      s.once('error', reject);
    });
  return {
    app,
    fastAnswered: () => answered(),
    async start() {
      const main = await listenOn(opts.port ?? deps.config.http.port);
      server = main.server;
      // http.extra_ports: the same surfaces on more ports (an imported panel's own, such as
      // 3x-ui's subscription port 2096, which the links customers hold name).
      if (opts.extraPorts && opts.port === undefined)
        for (const port of deps.config.http.extra_ports)
          try {
            extra.push((await listenOn(port)).server);
          } catch (err) {
            await this.stop(0);
            throw err;
          }
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      const { info } = main;
      return {
        port: info.port,
        url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${info.port}`,
        address: `${info.address.includes(':') ? `[${info.address}]` : info.address}:${info.port}`,
      };
    },
    async stop(graceMs = 5000) {
      const others = extra;
      extra = [];
      await Promise.all(others.map((o) => closeGracefully(o, graceMs)));
      if (!server) return;
      const s = server;
      server = undefined;
      await closeGracefully(s, graceMs);
    },
  };
}

async function closeGracefully(server: ServerType, graceMs: number): Promise<void> {
  const s = server as unknown as import('node:http').Server;
  // Stop accepting, let requests in flight finish (a refresh whose rotation committed must
  // still deliver its new token), then cut what is left after the grace period.
  // A keep-alive connection whose request finishes during the grace becomes idle and is
  // closed at the next tick of `idle` (Node closes only those idle at close() itself), so the
  // stop ends when the last request does, not at the grace.
  const closed = new Promise<void>((resolve) => s.close(() => resolve()));
  s.closeIdleConnections?.();
  const idle = setInterval(() => s.closeIdleConnections?.(), 50);
  const timer = setTimeout(() => s.closeAllConnections?.(), graceMs);
  await closed;
  clearInterval(idle);
  clearTimeout(timer);
}

/**
 * How long an idle kept-alive connection stays open: longer than the idle timeout of what
 * keeps connections to us (reverse proxies and load balancers: 60 s for nginx's upstream
 * keepalive_timeout and AWS's ALB; undici and browsers fewer), so it is always the client
 * that closes an idle connection. With Node's 5 s, the server could close a connection just as
 * a client sent a request on it: the client gets a reset and, for a POST, cannot know whether
 * it was done (a proxy answers 502). Headers of a request must still come within the
 * headers timeout (just above it, as Node advises), as before.
 */
const KEEP_ALIVE_MS = 65_000;
function keepAlive(s: { keepAliveTimeout: number; headersTimeout: number }): void {
  s.keepAliveTimeout = KEEP_ALIVE_MS;
  s.headersTimeout = KEEP_ALIVE_MS + 1000;
}
