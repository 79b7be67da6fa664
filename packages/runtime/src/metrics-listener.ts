import { createMetricsServer } from '@svc/metrics';
import { addressScope } from './listen-line.ts';
import type { Runtime } from './runtime.ts';

/**
 * The metrics port of a deployable (config metrics.port, SVC_METRICS_PORT): started when set,
 * logged with where it listens; null when unset (then only a token-guarded /metrics on the
 * public HTTP port serves them, docs/observability.md). The returned stop goes first in the
 * deployable's close, so a scrape during shutdown is refused rather than half-answered.
 */
export async function startMetricsListener(
  rt: Pick<Runtime, 'config' | 'metrics' | 'log'>,
): Promise<{ url: string; stop(): Promise<void> } | null> {
  const { port, host, token } = rt.config.metrics;
  if (port === undefined) return null;
  const server = createMetricsServer(rt.metrics, {
    host,
    port,
    token,
    onError: (err) => rt.log.error({ err }, 'metrics scrape failed'),
  });
  const { url, address } = await server.start();
  const scope = addressScope(address);
  rt.log.info(
    { metrics_url: url, address, token_required: token !== undefined },
    `metrics at ${url} (listening on ${address}${scope ? `, ${scope}` : ''})`,
  );
  return { url, stop: () => server.stop() };
}
