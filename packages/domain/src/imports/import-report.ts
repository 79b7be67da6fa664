import type { ImportNotCarried, ImportSourceKind } from './import-batch.ts';

/** One source user and what the import made of it (or, in a dry run, would make). */
export interface ImportedUserOutcome {
  username: string;
  action: 'create' | 'update';
  subscription_id: string;
  client_email: string;
  status: string;
  access_groups: string[];
}

/** What `svc import` prints: the whole mapping, counts, and every record it could not carry, with why. */
export interface ImportReport {
  dry_run: boolean;
  source: { kind: ImportSourceKind; name: string; version: string | null; links_verifiable: boolean };
  counts: { users_created: number; users_updated: number; access_groups_created: number };
  users: ImportedUserOutcome[];
  not_carried: ImportNotCarried[];
}
