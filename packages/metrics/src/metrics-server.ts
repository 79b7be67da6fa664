import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.ts';
import { scrapeTokenMatches } from './scrape-token.ts';

export interface MetricsServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** When set, every scrape must carry `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** A scrape that failed (a collector threw): logged by the caller. */
  onError?: (err: unknown) => void;
}

export interface MetricsServer {
  /** `url` reaches /metrics from this machine; `address` is what the socket is bound to. */
  start(): Promise<{ port: number; url: string; address: string }>;
  stop(): Promise<void>;
}

/**
 * The metrics port (SVC_METRICS_PORT): GET or HEAD /metrics and nothing else, on a listener of
 * its own so the public port never serves metrics unless a token guards them. Errors are
 * problem+json as on the HTTP surfaces (the same `urn:svc:problem:` types).
 */
export function createMetricsServer(metrics: Metrics, opts: MetricsServerOptions): MetricsServer {
  let server: Server | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return problem(res, 404, 'route-not-found', 'Not found', 'only /metrics is served on this port');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return problem(res, 405, 'method-not-allowed', 'Method not allowed', `${req.method} is not allowed on /metrics`, {
        allow: 'GET, HEAD',
      });
    }
    if (opts.token !== undefined && !scrapeTokenMatches(req.headers.authorization, opts.token)) {
      return problem(res, 401, 'unauthenticated', 'Authentication required', 'a scrape needs Authorization: Bearer <SVC_METRICS_TOKEN>', {
        'www-authenticate': 'Bearer',
      });
    }
    let body: string;
    try {
      body = await metrics.scrape();
    } catch (err) {
      opts.onError?.(err);
      return problem(res, 500, 'internal', 'Internal error', 'the metrics could not be collected; it has been logged');
    }
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  return {
    start: () =>
      new Promise((resolve, reject) => {
        const s = createServer((req, res) => {
          handle(req, res).catch((err) => {
            opts.onError?.(err);
            res.destroy();
          });
        });
        s.once('error', reject);
        s.listen({ host: opts.host, port: opts.port }, () => {
          s.off('error', reject);
          server = s;
          const { port, address } = s.address() as AddressInfo;
          const shown = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
          resolve({
            port,
            url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/metrics`,
            address: `${address.includes(':') ? `[${address}]` : address}:${port}`,
          });
        });
      }),
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
}

function problem(res: ServerResponse, status: number, slug: string, title: string, detail: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify({ type: `urn:svc:problem:${slug}`, title, status, detail, errors: {} });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
