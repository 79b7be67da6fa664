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

/** One source inbound: the access group and profile it stands as, and the nodes it is bound on here. */
export interface ImportedInboundOutcome {
  tag: string;
  protocol: string;
  port: number;
  access_group: string;
  /** The profile's name; null when it could not be made (`not_carried` says why). */
  profile: string | null;
  /** Node names it is bound on (made now or earlier). */
  nodes: string[];
}

/** What `svc import` prints: the whole mapping, counts, and every record it could not carry, with why. */
export interface ImportReport {
  dry_run: boolean;
  source: { kind: ImportSourceKind; name: string; version: string | null; links_verifiable: boolean };
  counts: {
    users_created: number;
    users_updated: number;
    access_groups_created: number;
    inbound_profiles_created: number;
    inbounds_created: number;
  };
  users: ImportedUserOutcome[];
  inbounds: ImportedInboundOutcome[];
  not_carried: ImportNotCarried[];
}
