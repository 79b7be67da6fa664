import {
  announceExpiringCertificates,
  announceOfflineNodes,
  cleanUpSignIn,
  deliverWebhook,
  dispatchEvents,
  EVENT_TYPES,
  enforceTrafficLimitsOf,
  enqueueDueIssuance,
  enqueueDueWebhookDeliveries,
  issueAcmeCertificate,
  JOBS,
  type JobData,
  type JobName,
  processPaymentEvent,
  processStrandedPaymentEvents,
  recheckDuePayments,
  registerAcmeAccount,
  requeueStaleBulkJobs,
  requeueStaleImports,
  runBulkJob,
  runImportJob,
  SYSTEM,
  sweepNodeTrafficPeriods,
  sweepSubscriptionStatuses,
  withActor,
} from '@svc/domain';
import type { Runtime } from '@svc/runtime';
import { announceBackups, backupJob } from './backup-job.ts';
import { readUploadedSource } from './import-job.ts';

export interface WorkerService {
  /** Takes jobs from the queue and makes sure the sweeps are scheduled. */
  start(): Promise<void>;
  /** Stops taking jobs; a job in progress finishes first. */
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** How often `subscriptions.sweep` and `nodes.traffic-sweep` run (default 30 s). */
  sweepEveryMs?: number;
  /** How often `nodes.presence-sweep` announces nodes away longer than the grace (default 30 s). */
  presenceEveryMs?: number;
  /** How often `events.dispatch` runs besides the job each recorded event asks for (default 60 s): catches a lost job. */
  eventsEveryMs?: number;
  /** How often `webhooks.sweep` hands due deliveries (retries) to `webhooks.deliver` (default 15 s). */
  webhooksEveryMs?: number;
  /** One delivery attempt's time limit (default 10 s). */
  webhookTimeoutMs?: number;
  /** How often `sign-in.cleanup` runs (default hourly). */
  cleanupEveryMs?: number;
  /** How often `payments.sweep` runs (default billing.recheck_every_seconds). */
  paymentsEveryMs?: number;
  /** How often `certificates.sweep` runs (default every 10 minutes). */
  certificatesEveryMs?: number;
  /** How often issuance asks the authoritative DNS servers whether a TXT value shows (default 2 s). */
  dnsPollMs?: number;
  /**
   * ACME limits (defaults in the domain: 30 s per request, 2 minutes per registration, an
   * issuance a minute less than its claim's stale age); tests shorten them.
   */
  acme?: { requestTimeoutMs?: number; registrationDeadlineMs?: number; issuanceDeadlineMs?: number };
  /** Take (and schedule) only these jobs; default every job. Workers split by kind of work, or a test that reads the mails itself. */
  only?: readonly JobName[];
}

/**
 * The worker's job handlers (docs/architecture.md, "Shape"): in-process in all-in-one mode
 * (`svc start`), in apps/worker over BullMQ in split mode. Each takes a job and calls one
 * domain verb as the system actor:
 * - `subscriptions.sweep`, scheduled every `sweepEveryMs` (one schedule however many
 *   workers): sweepSubscriptionStatuses (ended periods, reached limits, passed expiries);
 * - `subscriptions.enforce-limits` {ids}: handed over by a usage credit for subscriptions it
 *   brought to their limits but found held by another transaction (it stores the others
 *   itself), so they stop being served soon, not at the next sweep: enforceTrafficLimitsOf;
 * - `nodes.traffic-sweep`, scheduled every `sweepEveryMs` too: nodes whose quota period ended
 *   start a new one, and those limited by their quota are back in service (sweepNodeTrafficPeriods);
 * - `nodes.presence-sweep`, every `presenceEveryMs` (30 s): enabled nodes whose agent has been
 *   away longer than notify.node_offline_grace_seconds announced once (node.offline; announceOfflineNodes);
 * - `mail.send`: the message to the runtime's Mailer (SMTP, outbox, or none); a transport
 *   failure fails the job, and the queue retries it;
 * - `events.dispatch`, asked for by every recorded event and scheduled every `eventsEveryMs`:
 *   dispatchEvents (owner mails, webhook deliveries, then marked dispatched);
 * - `webhooks.deliver` {id}: one attempt of one delivery (deliverWebhook);
 * - `webhooks.sweep`, scheduled every `webhooksEveryMs`: due deliveries (retries after their
 *   backoff, attempts whose job was lost) to `webhooks.deliver`;
 * - `sign-in.cleanup`, every `cleanupEveryMs` (hourly): unconfirmed self-registrations older than
 *   24 h (spec 3.1 rule 2), spent magic links and OAuth requests: cleanUpSignIn.
 * - `payments.process-event` {id}: one stored provider webhook applied (processPaymentEvent);
 * - `payments.sweep`, every `paymentsEveryMs` (billing.recheck_every_seconds): events whose job
 *   was lost (processStrandedPaymentEvents), then pending payments due a re-read from their
 *   provider, expired past their deadline (recheckDuePayments).
 * - `acme.register-account` {id}: an ACME account registered with its CA (registerAcmeAccount;
 *   a refusal is kept on the account and the job retried), two at once: an attempt gives up at its
 *   deadline, and one CA that never answers holds one slot at most that long.
 * - `certificates.issue` {id}: one attempt to issue or renew an ACME certificate over DNS-01, if
 *   it is due (issueAcmeCertificate; a failure is recorded on the certificate and retried after
 *   a backoff, not by the queue);
 * - `certificates.sweep`, every `certificatesEveryMs` (10 minutes): uploaded certificates within 14
 *   days of expiry announced once per material (announceExpiringCertificates), ACME
 *   certificates due (renewal 30 days before expiry, retries, lost jobs) handed to
 *   `certificates.issue` (enqueueDueIssuance).
 * - `backups.run`, every backup.every_hours when backup.dir is set: an archive of the database
 *   and retention (backup-job.ts, docs/backups.md).
 * - `imports.run` {id}: an uploaded source store imported (runImportJob with the readers of
 *   import-job.ts), one at a time, progress and report on the import_jobs row (docs/import.md).
 * - `imports.sweep`, every minute: imports whose job was lost handed to the queue again.
 * - `bulk.run` {id}: a bulk action over subscriptions or clients, a chunk per transaction, its
 *   nodes bumped once at the end (runBulkJob); `bulk.sweep`, every minute: queued jobs whose job
 *   was lost and running ones whose worker died handed to the queue again (they resume where they were).
 * Every handler is idempotent (a job may run twice after a crash): the domain verbs lock
 * what they take (SKIP LOCKED, or a claiming UPDATE) and move only rows still due.
 */
/** One job of the worker: its handler, how many run at once, and (a sweep) how often it is scheduled. */
interface JobEntry<N extends JobName> {
  handle(data: JobData[N]): Promise<void>;
  concurrency?: number;
  /** Scheduled this often (one schedule however many workers), with empty data. */
  everyMs?: number;
  /** False: neither taken nor scheduled in this installation (backups without backup.dir). */
  enabled?: boolean;
}

/** Every job name with its entry: a name of JOBS without one (or one too many) does not compile. */
export type JobTable = { [N in JobName]: JobEntry<N> };

function jobTable(rt: Runtime, opts: WorkerOptions): JobTable {
  const ctx = withActor(rt.deps, SYSTEM);
  return {
    [JOBS.subscriptionsSweep]: {
      everyMs: opts.sweepEveryMs ?? 30_000,
      handle: async () => {
        const written = await sweepSubscriptionStatuses(ctx);
        if (written.reset || written.limited || written.expired) rt.log.info(written, 'subscription statuses written down');
      },
    },
    [JOBS.enforceLimits]: {
      concurrency: 2,
      handle: async ({ ids }) => {
        const limited = await enforceTrafficLimitsOf(ctx, ids);
        if (limited) rt.log.info({ limited }, 'traffic limits reached');
      },
    },
    [JOBS.nodesPresenceSweep]: {
      everyMs: opts.presenceEveryMs ?? 30_000,
      handle: async () => {
        const offline = await announceOfflineNodes(rt.deps);
        if (offline) rt.log.info({ offline }, 'nodes announced offline (node.offline)');
      },
    },
    [JOBS.nodesTrafficSweep]: {
      everyMs: opts.sweepEveryMs ?? 30_000,
      handle: async () => {
        const written = await sweepNodeTrafficPeriods(ctx);
        if (written.reset) rt.log.info(written, 'node quota periods started over');
      },
    },
    [JOBS.signInCleanup]: {
      everyMs: opts.cleanupEveryMs ?? 3600_000,
      handle: async () => {
        const removed = await cleanUpSignIn(ctx);
        if (removed.registrations) rt.log.info(removed, 'unconfirmed registrations removed');
      },
    },
    [JOBS.mailSend]: {
      concurrency: 2,
      handle: async (message) => {
        try {
          const sent = await rt.mailer.send(message);
          if (rt.mailer.kind === 'smtp')
            rt.log.info({ to: message.to, category: message.category, message_id: sent.message_id }, 'mail sent');
        } catch (err) {
          rt.log.warn({ err, to: message.to, category: message.category, transport: rt.mailer.kind }, 'mail not sent; retried');
          throw err;
        }
      },
    },
    [JOBS.eventsDispatch]: {
      everyMs: opts.eventsEveryMs ?? 60_000,
      handle: async () => {
        const done = await dispatchEvents(ctx);
        if (done.events) rt.log.info(done, 'events dispatched');
      },
    },
    [JOBS.webhooksDeliver]: {
      concurrency: 4,
      handle: async ({ id }) => {
        await deliverWebhook(ctx, id, { timeoutMs: opts.webhookTimeoutMs });
      },
    },
    [JOBS.webhooksSweep]: {
      everyMs: opts.webhooksEveryMs ?? 15_000,
      handle: async () => {
        await enqueueDueWebhookDeliveries(ctx);
      },
    },
    [JOBS.paymentsProcessEvent]: {
      concurrency: 2,
      handle: async ({ id }) => {
        const outcome = await processPaymentEvent(ctx, id);
        if (outcome) rt.log.info({ payment_event: id, outcome }, 'payment event processed');
      },
    },
    [JOBS.paymentsSweep]: {
      everyMs: opts.paymentsEveryMs ?? rt.config.billing.recheck_every_seconds * 1000,
      handle: async () => {
        const stranded = await processStrandedPaymentEvents(ctx);
        if (stranded) rt.log.info({ stranded }, 'payment events whose job was lost processed');
        const rechecked = await recheckDuePayments(ctx);
        if (rechecked.checked) rt.log.info(rechecked, 'pending payments re-read');
      },
    },
    [JOBS.acmeRegisterAccount]: {
      concurrency: 2,
      handle: async ({ id }) => {
        const account = await registerAcmeAccount(ctx, id, {
          deadlineMs: opts.acme?.registrationDeadlineMs,
          requestTimeoutMs: opts.acme?.requestTimeoutMs,
        });
        if (account.registered) rt.log.info({ acme_account_id: id }, 'ACME account registered');
      },
    },
    [JOBS.certificatesIssue]: {
      concurrency: 2,
      handle: async ({ id }) => {
        const outcome = await issueAcmeCertificate(ctx, id, {
          pollMs: opts.dnsPollMs,
          deadlineMs: opts.acme?.issuanceDeadlineMs,
          registrationDeadlineMs: opts.acme?.registrationDeadlineMs,
          requestTimeoutMs: opts.acme?.requestTimeoutMs,
        });
        if (outcome !== 'not due') rt.log.info({ certificate_id: id, outcome }, 'ACME certificate attempt done');
      },
    },
    [JOBS.certificatesSweep]: {
      everyMs: opts.certificatesEveryMs ?? 600_000,
      handle: async () => {
        const announced = await announceExpiringCertificates(ctx);
        if (announced) rt.log.info({ announced }, 'expiring certificates announced');
        const due = await enqueueDueIssuance(ctx);
        if (due) rt.log.info({ due }, 'ACME certificates due for issuance or renewal');
      },
    },
    [JOBS.backupsRun]: {
      enabled: Boolean(rt.config.backup.dir),
      everyMs: rt.config.backup.every_hours * 3600_000,
      handle: backupJob(rt, ctx),
    },
    // One at a time: an import is one large transaction, and holds its source file in memory.
    [JOBS.importsRun]: {
      concurrency: 1,
      handle: async ({ id }) => {
        await runImportJob(ctx, id, readUploadedSource);
        rt.log.info({ import_id: id }, 'import job ended');
      },
    },
    [JOBS.bulkRun]: {
      handle: async ({ id }) => {
        const job = await runBulkJob(rt.deps, id);
        if (job) rt.log.info({ bulk_job: id, status: job.status, done: job.done, skipped: job.skipped }, 'bulk job ran');
      },
    },
    [JOBS.bulkSweep]: {
      everyMs: 60_000,
      handle: async () => {
        const requeued = await requeueStaleBulkJobs(ctx);
        if (requeued) rt.log.warn({ requeued }, 'bulk jobs whose job was lost, or whose worker died, handed to the queue again');
      },
    },
    [JOBS.importsSweep]: {
      everyMs: 60_000,
      handle: async () => {
        const requeued = await requeueStaleImports(ctx);
        if (requeued) rt.log.warn({ requeued }, 'imports whose job was lost handed to the queue again');
      },
    },
  };
}

export function createWorker(rt: Runtime, opts: WorkerOptions = {}): WorkerService {
  const stops: Array<() => Promise<void>> = [];
  const takes = (name: JobName) => opts.only === undefined || opts.only.includes(name);
  const table = jobTable(rt, opts);
  // Jobs outside `only` (or not enabled here) are neither taken nor scheduled by this worker.
  const names = (Object.keys(table) as JobName[]).filter((name) => takes(name) && table[name].enabled !== false);
  return {
    start: async () => {
      // The worker reports the queues' depths (svc_job_queue_depth), read at each scrape; with
      // Redis away a scrape leaves them out rather than failing.
      rt.metrics.reportQueueDepths(() =>
        rt.shared.jobDepths().catch((err: unknown) => {
          rt.log.warn({ err }, 'job queue depths not read');
          return [];
        }),
      );
      const unknown = rt.config.notify.email_events.filter((t) => !(EVENT_TYPES as string[]).includes(t));
      if (unknown.length)
        rt.log.warn({ unknown, known: EVENT_TYPES }, 'notify.email_events (SVC_NOTIFY_EMAIL_EVENTS) names event types that do not exist');
      for (const name of names) {
        const entry = table[name] as JobEntry<JobName>;
        const handler = entry.handle as (data: JobData[JobName]) => Promise<void>;
        stops.push(await rt.deps.jobs.consume(name, handler, entry.concurrency ? { concurrency: entry.concurrency } : undefined));
      }
      if (names.includes(JOBS.backupsRun)) announceBackups(rt);
      for (const name of names) {
        const everyMs = table[name].everyMs;
        if (everyMs !== undefined) await rt.deps.jobs.schedule(name, everyMs, {} as JobData[typeof name]);
      }
    },
    stop: async () => {
      for (const stop of stops.splice(0)) await stop();
    },
  };
}
