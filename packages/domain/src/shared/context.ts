import type { Config } from '@svc/config';
import type { ActorType, AdminRole, Db } from '@svc/db';
import type { Metrics } from '@svc/metrics';
import type { Logger } from 'pino';
import type { AcmeProtocol } from '../acme/acme-port.ts';
import type { DnsAdapterFactory } from '../acme/dns/dns-provider-port.ts';
import type { AdminAccessCache } from '../auth/admin-access.ts';
import type { ApiTokenCache } from '../auth/api-tokens.ts';
import type { OAuthAdapterFactory } from '../auth/oauth/provider.ts';
import type { PasswordHasher } from '../auth/password-hasher.ts';
import type { RateLimitStore } from '../auth/rate-limit.ts';
import type { TokenService } from '../auth/tokens.ts';
import type { PaymentAdapterFactory } from '../billing/providers/port.ts';
import type { MessageBus } from './bus.ts';
import type { Clock } from './clock.ts';
import type { JobQueue } from './jobs.ts';
import type { OutboundPort } from './outbound.ts';
import type { Sealer } from './sealed.ts';

/** Who is acting, and from where; written to the audit log with every change. */
export interface Actor {
  type: ActorType;
  id: string | null;
  role?: AdminRole | undefined;
  ip?: string | null | undefined;
  userAgent?: string | null | undefined;
  /** An admin acting through an API token: its id (audit entries name it). */
  tokenId?: string | undefined;
}

export const SYSTEM: Actor = { type: 'system', id: null };
export const anonymous = (ip?: string | null, userAgent?: string | null): Actor => ({ type: 'anonymous', id: null, ip, userAgent });

/** What every use case may use: built once at start, shared by every surface. */
export interface DomainDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
  passwords: PasswordHasher;
  rateLimiter: RateLimitStore;
  /** Publish/subscribe between processes (memory in all-in-one mode, Redis in split mode). */
  bus: MessageBus;
  /** Background jobs (in-process in all-in-one mode, BullMQ in split mode). */
  jobs: JobQueue;
  tokens: TokenService;
  /** Each admin's current role and token generation, per process (authorize reads it per request). */
  adminAccess: AdminAccessCache;
  apiTokens: ApiTokenCache;
  /** Seals secrets at rest with the installation key. */
  secrets: Sealer;
  /** This process's Prometheus instruments (@svc/metrics; recorded by the transports and the worker). */
  metrics: Metrics;
  /** Every connection to a destination an admin or the configuration named, under the destination policy. */
  outbound: OutboundPort;
  /** The vendor clients the runtime builds (@svc/providers), behind the ports the domain declares. */
  vendors: Vendors;
}

/** The vendor clients, by family: each builds the port of a stored provider. */
export interface Vendors {
  paymentProvider: PaymentAdapterFactory;
  dnsProvider: DnsAdapterFactory;
  oauthProvider: OAuthAdapterFactory;
  acme: AcmeProtocol;
}

export interface DomainContext extends DomainDeps {
  actor: Actor;
}

export const withActor = (deps: DomainDeps, actor: Actor): DomainContext => ({ ...deps, actor });
