import type { EngineApi } from '@svc/engine-api';
import type { AgentMessage } from '@svc/proto';
import type { Logger } from 'pino';
import type { EngineProcess } from '../engine/engine-process.ts';
import { serialQueue } from '../serial.ts';
import type { JournalRecord, UsageJournal } from './usage-journal.ts';

export interface UsageSenderDeps {
  engine: EngineProcess;
  api: Pick<EngineApi, 'userTraffic'>;
  journal: UsageJournal;
  /** The Sync session's send (false when no stream is open) and whether one is. */
  send: (m: AgentMessage) => boolean;
  connected: () => boolean;
  log: Logger;
  /** Unacknowledged reports are sent again after this long. */
  resendAfterMs: number;
  /** New records, durable in the journal, before they are sent (the entitlements count them against the slices). */
  collected?: (records: JournalRecord[]) => Promise<void>;
}

/**
 * Usage from the engine to the gateway, exactly once: the engine's counters are read into the
 * journal (collect), every report not yet acknowledged is sent on each new stream in order, and
 * sent again while it stays unacknowledged (the gateway leaves one unanswered when its database
 * is away); an ack removes it from the journal.
 */
export class UsageSender {
  private readonly collecting = serialQueue();
  private readonly sentAt = new Map<bigint, number>();

  constructor(private readonly deps: UsageSenderDeps) {}

  /** Reads the engine's counters into the journal and sends the new reports. */
  collect(): Promise<void> {
    const { engine, api, journal } = this.deps;
    return this.collecting(async () => {
      const instance = engine.instance;
      if (!instance) return;
      const counters = await api.userTraffic();
      if (engine.instance !== instance) return;
      const records = await journal.collect({ instance, counters });
      if (records.length > 0) await this.deps.collected?.(records);
      for (const r of records) this.send(r.reportId, r.entries);
    });
  }

  /** Bytes the engine counted that the journal holds no record of yet, per subscription (a read, no write); null without an engine. */
  peek(): Promise<Map<string, bigint> | null> {
    const { engine, api, journal } = this.deps;
    return this.collecting(async () => {
      const instance = engine.instance;
      if (!instance) return null;
      const counters = await api.userTraffic();
      if (engine.instance !== instance) return null;
      return journal.unjournaled({ instance, counters });
    });
  }

  /** A stream opened: every report still unacknowledged goes again, oldest first. */
  opened(): void {
    this.sentAt.clear();
    for (const r of this.deps.journal.pending()) this.send(r.reportId, r.entries);
  }

  acknowledged(reportId: bigint): void {
    const { journal, log } = this.deps;
    log.debug({ report_id: String(reportId) }, 'usage ack');
    this.sentAt.delete(reportId);
    void journal.ack(reportId).catch((err) => log.error({ err, report_id: String(reportId) }, 'usage ack not recorded'));
  }

  /** Reports without an ack for resendAfterMs are sent again. */
  resendStale(): void {
    if (!this.deps.connected()) return;
    const limit = Date.now() - this.deps.resendAfterMs;
    for (const r of this.deps.journal.pending()) {
      const at = this.sentAt.get(r.reportId);
      if (at === undefined || at < limit) this.send(r.reportId, r.entries);
    }
  }

  private send(reportId: bigint, entries: Array<{ subscriptionId: string; uplink: bigint; downlink: bigint }>): void {
    const sent = this.deps.send({
      usage: {
        reportId,
        entries: entries.map((e) => ({ subscriptionId: e.subscriptionId, uplinkBytes: e.uplink, downlinkBytes: e.downlink })),
      },
    });
    if (sent) this.sentAt.set(reportId, Date.now());
    this.deps.log.debug({ report_id: String(reportId), entries: entries.length, sent }, 'usage report');
  }
}
