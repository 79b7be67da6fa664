/**
 * Background jobs (docs/architecture.md, the job table). In all-in-one mode an in-process queue, in
 * split mode BullMQ over Redis: a job enqueued by any process runs once, in whichever worker
 * takes it, retried on failure. Handlers must be idempotent (a job may run again after a
 * crash); the domain functions they call are.
 */
export interface JobQueue {
  /** Adds a job; with `id`, a job of that id still waiting is not added twice. */
  enqueue<N extends JobName>(name: N, data: JobData[N], opts?: { id?: string }): Promise<void>;
  /** Runs `name` every `everyMs` (one scheduler entry per name, whatever the number of replicas). */
  schedule<N extends JobName>(name: N, everyMs: number, data: JobData[N]): Promise<void>;
  /** Takes jobs of `name` in this process; resolves with a function that stops taking them. */
  consume<N extends JobName>(
    name: N,
    handler: (data: JobData[N]) => Promise<void>,
    opts?: { concurrency?: number },
  ): Promise<() => Promise<void>>;
}

/** Job names; one list so producers and the worker cannot drift apart. */
export const JOBS = {
  /** Write down what time and usage changed: ended renewal periods, reached limits, expiries. */
  subscriptionsSweep: 'subscriptions.sweep',
  /** Usage credited to these subscriptions may have reached their limits. */
  enforceLimits: 'subscriptions.enforce-limits',
  /** Start the new quota period of nodes whose period ended, lifting the limits it no longer holds (nodes/node-traffic.ts). */
  nodesTrafficSweep: 'nodes.traffic-sweep',
  /** Announce nodes whose agent stayed away longer than the grace: node.offline (agents/node-presence.ts). */
  nodesPresenceSweep: 'nodes.presence-sweep',
  /** One mail to send (notifications/queue-mail.ts). */
  mailSend: 'mail.send',
  /** Send undispatched outbox events to the notification channels (events/record-event.ts). */
  eventsDispatch: 'events.dispatch',
  /** Remove what expired: unconfirmed password registrations after 24 h (spec 3.1 rule 2), magic links, OAuth requests. */
  signInCleanup: 'sign-in.cleanup',
  /** One webhook delivery attempt, if it is due (webhooks/deliver-webhook.ts). */
  webhooksDeliver: 'webhooks.deliver',
  /** Hand the deliveries whose next attempt is due to `webhooks.deliver` (retries that survive restarts). */
  webhooksSweep: 'webhooks.sweep',
  /** Apply one stored provider webhook event (payments/process-payment-event.ts). */
  paymentsProcessEvent: 'payments.process-event',
  /** Re-read pending payments that are due from their providers, expire the ones past their deadline, process events whose job was lost. */
  paymentsSweep: 'payments.sweep',
  /** Register one ACME account with its CA (acme/register-acme-account.ts). */
  acmeRegisterAccount: 'acme.register-account',
  /** One attempt to issue or renew an ACME certificate, if it is due (certificates/issue-acme-certificate.ts). */
  certificatesIssue: 'certificates.issue',
  /** Announce uploaded certificates that expire within 14 days (certificates/announce-expiring.ts). */
  certificatesSweep: 'certificates.sweep',
  /** Write a backup archive and apply retention (backups/scheduled-backup.ts; scheduled only when backup.dir is set). */
  backupsRun: 'backups.run',
  /** Run one bulk action (bulk/run-bulk-job.ts). */
  bulkRun: 'bulk.run',
  /** Hand bulk jobs whose job was lost, or whose worker died, to the queue again. */
  bulkSweep: 'bulk.sweep',
  /** Import one uploaded source store (imports/import-jobs.ts). */
  importsRun: 'imports.run',
  /** Hand imports whose job was lost to the queue again. */
  importsSweep: 'imports.sweep',
} as const;
export type JobName = (typeof JOBS)[keyof typeof JOBS];

export interface JobData {
  'subscriptions.sweep': Record<string, never>;
  'subscriptions.enforce-limits': { ids: string[] };
  'nodes.traffic-sweep': Record<string, never>;
  'nodes.presence-sweep': Record<string, never>;
  'mail.send': import('../notifications/queue-mail.ts').MailMessage;
  'events.dispatch': Record<string, never>;
  'sign-in.cleanup': Record<string, never>;
  'webhooks.deliver': { id: string };
  'webhooks.sweep': Record<string, never>;
  'payments.process-event': { id: string };
  'payments.sweep': Record<string, never>;
  'acme.register-account': { id: string };
  'certificates.issue': { id: string };
  'certificates.sweep': Record<string, never>;
  'backups.run': Record<string, never>;
  'bulk.run': { id: string };
  'bulk.sweep': Record<string, never>;
  'imports.run': { id: string };
  'imports.sweep': Record<string, never>;
}
