import type { Db } from '@svc/db';
import { sql } from 'kysely';
import { until } from './until.ts';

/**
 * Waits until every staged usage report has been folded (usage_inbox empty). A UsageAck means
 * the report is staged, durably and once; the gateway's fold credits it right after
 * (domain agents/usage-fold.ts). Call it after the acks a check depends on: what it reads then
 * is every acknowledged report credited, so a report counted twice shows too.
 */
export async function usageFolded(db: Db, timeoutMs = 10_000): Promise<void> {
  await until(
    'the staged usage reports folded',
    async () => (await sql<{ n: number }>`select count(*)::int as n from usage_inbox`.execute(db)).rows[0]?.n === 0,
    timeoutMs,
  );
}
