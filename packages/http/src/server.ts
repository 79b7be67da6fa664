import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { DomainDeps } from '@svc/domain';
import { createApp } from './app.ts';
import type { AppEnv } from './env.ts';

export interface HttpService {
  start(): Promise<{ port: number; url: string }>;
  stop(): Promise<void>;
  app: OpenAPIHono<AppEnv>;
}

/**
 * An HTTP listener for a root app with the given surfaces mounted. Used by the admin-api
 * alone and by `svc start`, which mounts every surface on one port.
 */
export function createHttpService(
  deps: DomainDeps,
  mount: (root: OpenAPIHono<AppEnv>) => void,
  opts: { host?: string; port?: number } = {},
): HttpService {
  const app = createApp(deps);
  mount(app);
  let server: ServerType | undefined;
  return {
    app,
    start: () =>
      new Promise((resolve, reject) => {
        const host = opts.host ?? deps.config.http.host;
        const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? deps.config.http.port }, (info: AddressInfo) => {
          const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
          resolve({ port: info.port, url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${info.port}` });
        });
        s.once('error', reject);
        server = s;
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        const s = server;
        server = undefined;
        s.close(() => resolve());
        (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
