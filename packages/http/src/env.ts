import type { AccessClaims, DomainDeps } from '@svc/domain';

/** Per-request values every handler can read with `c.get(...)`. */
export interface AppEnv {
  Variables: {
    deps: DomainDeps;
    auth: AccessClaims;
    clientIp: string | null;
  };
}
