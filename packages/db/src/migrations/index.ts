import type { Migration } from 'kysely';
import * as foundation from './2026-11-21T0900-foundation.ts';

/** Every migration, registered explicitly, in order. Names never change once released. */
export const migrations: Record<string, Migration> = {
  '2026-11-21T0900-foundation': foundation,
};
