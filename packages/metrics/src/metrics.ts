import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { BoundHistogram } from './bound-histogram.ts';

/** Which deployable a registry belongs to: the `app` label every series of the process carries. */
export type AppName = 'svc' | 'admin-api' | 'portal-api' | 'control-plane' | 'worker';

/** Job queue states reported by svc_job_queue_depth. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** How each job run ended: done, failed and to be tried again, failed for good. */
export type JobOutcome = 'completed' | 'retried' | 'failed';

/** Why usage entries were not credited (usage-ingest.ts in the domain; a fixed list). */
export type UsageRefusal = 'invalid' | 'not_served' | 'replayed';

export interface QueueDepth {
  job: string;
  state: QueueState;
  count: number;
}

/** Request latency buckets, seconds: a cached /sub answer (~0.1 ms) up to a slow export (10 s). */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** DesiredState sizes, bytes: 1 KiB (a node with a few users) to 256 MiB (the send limit). */
const SIZE_BUCKETS = [1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864, 268_435_456];
const JOB_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300];

/**
 * The process's Prometheus registry and every instrument the apps record into. One per
 * process (all-in-one: one for every surface), never the global registry: tests run several
 * installations in one process. Labels are bounded by construction: route patterns (never
 * paths), methods and status classes from fixed lists, job names from the domain's JOBS,
 * reasons and results from the unions above. No node, user, subscription or token is a label.
 */
export class Metrics {
  readonly registry: Registry;
  /** Every HTTP answer is one observation: label sets are bound once (bound-histogram.ts). */
  readonly httpDuration: BoundHistogram<'route' | 'method' | 'status_class'>;
  readonly streamsOpen: Gauge;
  readonly desiredStatesSent: Counter;
  readonly desiredStateRawBytes: Counter;
  readonly desiredStateSentBytes: Counter;
  readonly desiredStateSize: Histogram;
  readonly bigDesiredStates: Counter<'source'>;
  readonly applyResults: Counter<'result'>;
  readonly usageReports: Counter<'result'>;
  readonly usageIngested: Counter;
  readonly usageRefused: Counter<'reason'>;
  readonly usageInbox: Gauge;
  readonly usageInboxOldest: Gauge;
  readonly jobRuns: Counter<'job' | 'outcome'>;
  readonly jobDuration: Histogram<'job'>;
  private readonly subCacheTally = { hit: 0, miss: 0 };
  private depthSource: (() => Promise<QueueDepth[]>) | undefined;

  constructor(app: AppName, opts: { defaultMetrics?: boolean } = {}) {
    const registry = new Registry();
    registry.setDefaultLabels({ app });
    this.registry = registry;
    // Process metrics (CPU, memory, event loop lag, GC, handles), named as prom-client names them.
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
    const registers = [registry];
    this.httpDuration = new BoundHistogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP requests by route pattern (unmatched: no route), method and status class, from arrival to the answer written',
      labelNames: ['route', 'method', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.streamsOpen = new Gauge({
      name: 'svc_gateway_streams_open',
      help: 'Agent Sync streams held by this gateway process',
      registers,
    });
    this.desiredStatesSent = new Counter({
      name: 'svc_gateway_desired_states_sent_total',
      help: 'DesiredState messages sent to agents',
      registers,
    });
    this.desiredStateRawBytes = new Counter({
      name: 'svc_gateway_desired_state_raw_bytes_total',
      help: 'Encoded size of the DesiredStates sent, before compression',
      registers,
    });
    this.desiredStateSentBytes = new Counter({
      name: 'svc_gateway_desired_state_sent_bytes_total',
      help: 'Size of the DesiredStates as written to the wire (gzip when the agent accepts it and the message is large enough)',
      registers,
    });
    this.desiredStateSize = new Histogram({
      name: 'svc_gateway_desired_state_size_bytes',
      help: 'Encoded size of each DesiredState sent, before compression',
      buckets: SIZE_BUCKETS,
      registers,
    });
    this.bigDesiredStates = new Counter({
      name: 'svc_gateway_big_desired_states_total',
      help: 'DesiredStates of big nodes (10,000 users or more) made for a send: kept (the last push kept on disk, sent as it was) or compiled',
      labelNames: ['source'],
      registers,
    });
    this.applyResults = new Counter({
      name: 'svc_gateway_apply_results_total',
      help: 'ApplyResults received from agents: applied, or failed (the node kept its previous configuration)',
      labelNames: ['result'],
      registers,
    });
    this.usageReports = new Counter({
      name: 'svc_usage_reports_total',
      help: 'UsageReports received: applied, or replayed (an id already accepted; acknowledged, not applied again)',
      labelNames: ['result'],
      registers,
    });
    this.usageIngested = new Counter({
      name: 'svc_usage_entries_ingested_total',
      help: 'Usage entries credited to a subscription (entries of one subscription, node and hour in one fold count once)',
      registers,
    });
    this.usageRefused = new Counter({
      name: 'svc_usage_entries_refused_total',
      help: 'Usage entries not credited, by reason: invalid (no storable subscription id, negative or oversized delta), not_served (a subscription the node does not serve, or no longer exists), replayed (in a report already applied)',
      labelNames: ['reason'],
      registers,
    });
    this.usageInbox = new Gauge({
      name: 'svc_usage_inbox_entries',
      help: 'Usage entries acknowledged and staged, not yet credited, as this process saw after its last fold (a growing figure: the fold does not keep up)',
      registers,
    });
    this.usageInboxOldest = new Gauge({
      name: 'svc_usage_inbox_oldest_seconds',
      help: 'How long the oldest staged usage report had waited for its credit, as this process saw after its last fold: how far usage figures and the limits they reach trail the agents',
      registers,
    });
    this.jobRuns = new Counter({
      name: 'svc_jobs_total',
      help: 'Background job runs by job and outcome: completed, retried (failed, will run again), failed (failed its last attempt)',
      labelNames: ['job', 'outcome'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'svc_job_duration_seconds',
      help: 'Background job run time, whatever the outcome',
      labelNames: ['job'],
      buckets: JOB_BUCKETS,
      registers,
    });
    const self = this;
    // Counted in plain numbers (subCacheRead: one per /sub answer) and added when read.
    new Counter({
      name: 'svc_sub_cache_requests_total',
      help: 'GET /sub/{token} document reads: hit (answered from memory), miss (waited for the database)',
      labelNames: ['result'],
      registers,
      collect() {
        for (const result of ['hit', 'miss'] as const) {
          const n = self.subCacheTally[result];
          if (n === 0) continue;
          self.subCacheTally[result] = 0;
          this.inc({ result }, n);
        }
      },
    });
    new Gauge({
      name: 'svc_job_queue_depth',
      help: 'Jobs in the queues by job and state, read at scrape time (reported by the worker)',
      labelNames: ['job', 'state'],
      registers,
      async collect() {
        const source = self.depthSource;
        if (!source) return;
        this.reset();
        for (const d of await source()) this.set({ job: d.job, state: d.state }, d.count);
      },
    });
  }

  /** The worker names where queue depths are read (BullMQ or the in-process queue). */
  reportQueueDepths(source: () => Promise<QueueDepth[]>): void {
    this.depthSource = source;
  }

  /** One finished job run. */
  jobRan(job: string, outcome: JobOutcome, seconds: number): void {
    this.jobRuns.inc({ job, outcome });
    this.jobDuration.observe({ job }, seconds);
  }

  /** One GET /sub/{token} document read: from memory (hit) or waited for the database (miss). */
  subCacheRead(result: 'hit' | 'miss'): void {
    this.subCacheTally[result]++;
  }

  /** The text exposition of every metric of this process. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

export function createMetrics(app: AppName, opts: { defaultMetrics?: boolean } = {}): Metrics {
  return new Metrics(app, opts);
}
