import type { ColumnType } from 'kysely';

/** Operator settings by key; the value's shape belongs to the domain module that owns the key. Written as a JSON string. */
export interface SettingsTable {
  key: string;
  value: ColumnType<Record<string, unknown>, string, string>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}
