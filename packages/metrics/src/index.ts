export { BoundHistogram, type HistogramChild } from './bound-histogram.ts';
export { methodLabel, statusClass, UNMATCHED_ROUTE } from './http-labels.ts';
export {
  type AppName,
  createMetrics,
  type JobOutcome,
  Metrics,
  QUEUE_STATES,
  type QueueDepth,
  type QueueState,
  type UsageRefusal,
} from './metrics.ts';
export { createMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.ts';
export { scrapeTokenMatches } from './scrape-token.ts';
