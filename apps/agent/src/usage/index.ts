/** Usage collection of the agent: engine counters into a crash-proof journal of UsageReport records (see usage-journal.ts). */
export type { CounterReading, JournalRecord, UsageEntryDelta, UsageJournalOptions, UsageJournalStats } from './usage-journal.ts';
export { UsageJournal } from './usage-journal.ts';
