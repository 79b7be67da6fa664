import type { AdminKnownAddressesTable, AdminsTable, ApiTokensTable, SetupTokensTable } from './admins.ts';
import type { AuditLogTable } from './audit-log.ts';
import type {
  AcmeAccountsTable,
  DnsProvidersTable,
  PaymentEventsTable,
  PaymentProvidersTable,
  PaymentsTable,
  PlanAccessGroupsTable,
  PlansTable,
} from './billing.ts';
import type { BulkJobItemsTable, BulkJobNodesTable, BulkJobsTable } from './bulk-jobs.ts';
import type {
  ClientKnownAddressesTable,
  ClientsTable,
  SubscriptionAccessGroupsTable,
  SubscriptionCountersTable,
  SubscriptionsTable,
  UsageHourlyTable,
  UsageInboxTable,
} from './customers.ts';
import type { SubscriptionDevicesTable, SubscriptionOnlineAddressesTable } from './devices.ts';
import type {
  AccessGroupInboundsTable,
  AccessGroupsTable,
  CertificateRolloutsTable,
  CertificatesTable,
  ChainHopsTable,
  ChainsTable,
  GatewayReplicasTable,
  InboundProfilesTable,
  InboundsTable,
  NodeCutoffsTable,
  NodeGroupGraceTable,
  NodesTable,
  SubscriptionGroupGraceTable,
  TrafficSlicesTable,
} from './fleet.ts';
import type { ImportedInboundsTable, ImportedUsersTable, ImportJobsTable, ImportSourcesTable } from './imports.ts';
import type { CertificateAuthorityTable, InstallationTable, SigningKeysTable } from './installation.ts';
import type { RefreshTokensTable, SessionsTable } from './sessions.ts';
import type { SettingsTable } from './settings.ts';
import type {
  AdminOAuthIdentitiesTable,
  ClientOAuthIdentitiesTable,
  EventsTable,
  MagicLinkTokensTable,
  OAuthRequestsTable,
} from './sign-in.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './webhooks.ts';

export interface Database {
  import_sources: ImportSourcesTable;
  imported_users: ImportedUsersTable;
  imported_inbounds: ImportedInboundsTable;
  import_jobs: ImportJobsTable;
  bulk_jobs: BulkJobsTable;
  bulk_job_items: BulkJobItemsTable;
  bulk_job_nodes: BulkJobNodesTable;
  subscription_devices: SubscriptionDevicesTable;
  subscription_online_addresses: SubscriptionOnlineAddressesTable;
  installation: InstallationTable;
  signing_keys: SigningKeysTable;
  certificate_authority: CertificateAuthorityTable;
  admins: AdminsTable;
  api_tokens: ApiTokensTable;
  admin_known_addresses: AdminKnownAddressesTable;
  setup_tokens: SetupTokensTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  audit_log: AuditLogTable;
  nodes: NodesTable;
  traffic_slices: TrafficSlicesTable;
  node_cutoffs: NodeCutoffsTable;
  gateway_replicas: GatewayReplicasTable;
  certificates: CertificatesTable;
  certificate_rollouts: CertificateRolloutsTable;
  inbound_profiles: InboundProfilesTable;
  chains: ChainsTable;
  chain_hops: ChainHopsTable;
  inbounds: InboundsTable;
  access_groups: AccessGroupsTable;
  access_group_inbounds: AccessGroupInboundsTable;
  node_group_grace: NodeGroupGraceTable;
  subscription_group_grace: SubscriptionGroupGraceTable;
  clients: ClientsTable;
  subscriptions: SubscriptionsTable;
  subscription_counters: SubscriptionCountersTable;
  subscription_access_groups: SubscriptionAccessGroupsTable;
  usage_hourly: UsageHourlyTable;
  usage_inbox: UsageInboxTable;
  plans: PlansTable;
  plan_access_groups: PlanAccessGroupsTable;
  payment_providers: PaymentProvidersTable;
  payments: PaymentsTable;
  payment_events: PaymentEventsTable;
  dns_providers: DnsProvidersTable;
  acme_accounts: AcmeAccountsTable;
  settings: SettingsTable;
  magic_link_tokens: MagicLinkTokensTable;
  client_known_addresses: ClientKnownAddressesTable;
  admin_oauth_identities: AdminOAuthIdentitiesTable;
  client_oauth_identities: ClientOAuthIdentitiesTable;
  oauth_requests: OAuthRequestsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export type * from './admins.ts';
export type * from './audit-log.ts';
export type * from './billing.ts';
export type * from './bulk-jobs.ts';
export type * from './customers.ts';
export type * from './devices.ts';
export type * from './fleet.ts';
export type { ImportSourceKindColumn } from './imports.ts';
export type { StoredReality, StoredStream, StreamNetwork, StreamSecurity } from './inbound-stream.ts';
export type * from './installation.ts';
export type * from './sessions.ts';
export type * from './settings.ts';
export type * from './sign-in.ts';
export type * from './webhooks.ts';
