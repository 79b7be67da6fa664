import type { Db } from '@svc/db';
import { type AuditEntry, insertAuditEntries, type PendingAudit } from '../audit/write-audit.ts';
import { announceNodeViews } from '../live/admin-events.ts';
import { TOPICS } from './bus.ts';
import type { Actor, DomainDeps } from './context.ts';
import { SYSTEM } from './context.ts';
import { isRetryableConflict } from './db-errors.ts';
import type { JobData, JobName } from './jobs.ts';

/** What opening a unit of work needs: the database, the clock for audit times, and the ports its consequences go out through. */
export type UnitOfWorkDeps = Pick<DomainDeps, 'db' | 'clock' | 'log' | 'bus' | 'jobs'> & { actor?: Actor | undefined };

export interface UnitOfWorkOptions {
  /** Default: the database's (READ COMMITTED). The desired-state loader reads in REPEATABLE READ. */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** Refuses writes: a consistent read of several statements. */
  readOnly?: boolean;
  /**
   * Runs the whole unit again (a fresh one: nothing of the failed attempt survives) when it
   * lost a deadlock or a serialization conflict, up to this many attempts in all. Default 1.
   */
  attempts?: number;
}

/** Only unitOfWork holds these: nobody else can make a UnitOfWork or finish one. */
const OPEN: unique symbol = Symbol('unit-of-work.open');
const BEFORE_COMMIT: unique symbol = Symbol('unit-of-work.before-commit');
const COMMITTED: unique symbol = Symbol('unit-of-work.committed');

/** How many node ids one nodes.changed message carries (a 1,000-node change is one message). */
const IDS_PER_MESSAGE = 1000;

/**
 * One transaction and what it causes (docs/architecture.md, Domain, "One unit of work"). A use case that writes receives it and leaves its
 * consequences on it: the nodes whose agents must hear of the change (`nodesChanged`, set by
 * bumpNodeRevisions), audit entries (written in the same transaction, one statement, just
 * before commit), whether what subscription links show changed, events, jobs and callbacks
 * for after commit. None of them happens if the transaction rolls back. It cannot be made
 * outside `unitOfWork`, so a function that takes one cannot be called without a transaction
 * whose consequences will be carried out.
 */
export class UnitOfWork {
  /** The transaction: every statement of the unit goes through it. */
  readonly db: Db;
  /** Who the audit entries name. */
  readonly actor: Actor;
  readonly #deps: UnitOfWorkDeps;
  readonly #nodes = new Set<string>();
  readonly #nodeViews = new Set<string>();
  #subscriptionLinks = false;
  readonly #audit: PendingAudit[] = [];
  /** Entity types of the audit entries written: announced after commit (AdminLiveEvent 'changed'). */
  readonly #written = new Set<string>();
  readonly #events: Array<{ topic: string; message: unknown }> = [];
  readonly #jobs: Array<{ name: JobName; data: unknown; id?: string | undefined }> = [];
  readonly #callbacks: Array<() => Promise<void> | void> = [];

  constructor(key: typeof OPEN, trx: Db, deps: UnitOfWorkDeps) {
    if (key !== OPEN) throw new Error('a UnitOfWork is opened by unitOfWork() only');
    this.db = trx;
    this.#deps = deps;
    this.actor = deps.actor ?? SYSTEM;
  }

  /**
   * These nodes' desired state or admission changed: after commit `nodes.changed` tells every
   * gateway replica, which pushes to (or ends) the streams it holds. A revision bump goes
   * through bumpNodeRevisions, which calls this.
   */
  nodesChanged(nodeIds: Iterable<string>): void {
    for (const id of nodeIds) this.#nodes.add(id);
  }

  /**
   * These nodes' views changed without a change to what they must run (connectivity, applied
   * revision, an apply result): after commit the admin panel's event stream hears it.
   */
  nodeViewsChanged(nodeIds: Iterable<string>): void {
    for (const id of nodeIds) this.#nodeViews.add(id);
  }

  /** What some subscription link shows changed (token, status, credentials, client): cached answers are dropped after commit. */
  subscriptionLinksChanged(): void {
    this.#subscriptionLinks = true;
  }

  /**
   * An audit_log entry, timed now, written in this transaction: by this unit's actor, or by
   * `actor` where the unit learns who acts only inside it (the admin a login authenticated).
   */
  audit(entry: AuditEntry, actor: Actor = this.actor): void {
    this.#audit.push({ entry, actor, at: this.#deps.clock.now() });
  }

  /** A message for the bus, published after commit (at most once, like every bus message). */
  publish(topic: string, message: unknown): void {
    this.#events.push({ topic, message });
  }

  /**
   * A background job, handed to the queue after commit without waiting for the queue's answer:
   * a job is work for later, so a slow or unreachable queue must not hold up the caller (the
   * agent's UsageAck waits on the usage ingest). Every job that is enqueued here has a
   * scheduled sweep behind it that catches what a lost enqueue missed.
   */
  enqueue<N extends JobName>(name: N, data: JobData[N], opts?: { id?: string }): void {
    this.#jobs.push({ name, data, id: opts?.id });
  }

  /** Work for after commit (never run on rollback); a failure is logged, never undoes the commit. */
  afterCommit(fn: () => Promise<void> | void): void {
    this.#callbacks.push(fn);
  }

  /** Writes what belongs inside the transaction (the audit entries). */
  async [BEFORE_COMMIT](): Promise<void> {
    for (const a of this.#audit) if (a.entry.entity_type) this.#written.add(a.entry.entity_type);
    if (this.#audit.length > 0) await insertAuditEntries(this.db, this.#audit.splice(0));
  }

  /** Carries out what the committed unit caused. Never throws: the change stands. */
  async [COMMITTED](): Promise<void> {
    const { bus, jobs, log } = this.#deps;
    if (this.#nodes.size > 0) await announceNodesChanged(this.#deps, [...this.#nodes]);
    if (this.#subscriptionLinks) {
      await bus
        .publish(TOPICS.subscriptionsChanged, {})
        .catch((err) => log.warn({ err }, 'subscriptions.changed not published; cached subscription links expire within their age limit'));
    }
    for (const e of this.#events) {
      await bus.publish(e.topic, e.message).catch((err) => log.warn({ err, topic: e.topic }, 'event not published after commit'));
    }
    if (this.#nodeViews.size > 0) await announceNodeViews(this.#deps, [...this.#nodeViews]);
    // Lists showing what was written are stale: the panel's event stream says which (admin-events.ts).
    if (this.#written.size > 0) {
      const event = { type: 'changed', entities: [...this.#written] };
      await bus.publish(TOPICS.adminEvents, event).catch((err) => log.warn({ err }, 'admin live event not published'));
    }
    for (const j of this.#jobs) {
      void jobs
        .enqueue(j.name, j.data as never, j.id ? { id: j.id } : undefined)
        .catch((err) => log.warn({ err, job: j.name }, 'job not enqueued after commit; its schedule picks the work up'));
    }
    for (const fn of this.#callbacks) {
      try {
        await fn();
      } catch (err) {
        log.warn({ err }, 'after-commit work failed');
      }
    }
  }
}

/**
 * The one way to open a transaction. Runs `fn` with a fresh UnitOfWork; on success writes its
 * audit entries, commits, then carries out its consequences (announcements, events and
 * callbacks awaited, so a caller that sees the result also sees them sent; jobs handed over
 * without waiting) before resolving. On failure the transaction rolls back and nothing of it
 * happens.
 *
 * Given a unit of work that is already open, `fn` joins it instead: one transaction, and its
 * consequences are carried out by that unit's commit. This is how one use case passes its unit
 * on to another (a payment that creates a subscription; a certificate that bumps its nodes).
 * `opts` apply only to a unit this call opens.
 */
export async function unitOfWork<T>(
  scope: UnitOfWorkDeps | UnitOfWork,
  fn: (uow: UnitOfWork) => Promise<T>,
  opts: UnitOfWorkOptions = {},
): Promise<T> {
  if (scope instanceof UnitOfWork) return fn(scope);
  const deps = scope;
  const attempts = opts.attempts ?? 1;
  for (let attempt = 1; ; attempt++) {
    let uow: UnitOfWork | undefined;
    try {
      let tx = deps.db.transaction();
      if (opts.isolation) tx = tx.setIsolationLevel(opts.isolation);
      if (opts.readOnly) tx = tx.setAccessMode('read only');
      const result = await tx.execute(async (trx) => {
        uow = new UnitOfWork(OPEN, trx, deps);
        const value = await fn(uow);
        await uow[BEFORE_COMMIT]();
        return value;
      });
      await (uow as UnitOfWork)[COMMITTED]();
      return result;
    } catch (err) {
      if (attempt < attempts && isRetryableConflict(err)) continue;
      throw err;
    }
  }
}

/** Publishes nodes.changed in messages of at most 1,000 ids; a bus failure is logged, never undoes the committed change. */
export async function announceNodesChanged(deps: Pick<DomainDeps, 'bus' | 'log'>, nodeIds: readonly string[]): Promise<void> {
  for (let i = 0; i < nodeIds.length; i += IDS_PER_MESSAGE) {
    const ids = nodeIds.slice(i, i + IDS_PER_MESSAGE);
    try {
      await deps.bus.publish(TOPICS.nodesChanged, { ids });
    } catch (err) {
      deps.log.warn({ err, nodes: ids.length }, 'nodes.changed not published; the gateway reconciliation will pick the change up');
    }
  }
}
