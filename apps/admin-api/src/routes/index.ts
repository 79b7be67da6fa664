import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import type { AdminState } from '../admin-state.ts';
import * as access_groupsFeature from './access-groups/index.ts';
import * as acme_accountsFeature from './acme-accounts/index.ts';
import * as adminsCreate from './admins/create.ts';
import * as adminsDelete from './admins/delete.ts';
import * as adminsGet from './admins/get.ts';
import * as adminsList from './admins/list.ts';
import * as adminsUpdate from './admins/update.ts';
import * as api_tokensFeature from './api-tokens/index.ts';
import * as auditList from './audit-log/list.ts';
import * as login from './auth/login.ts';
import * as logout from './auth/logout.ts';
import * as me from './auth/me.ts';
import * as methods from './auth/methods.ts';
import * as oauth from './auth/oauth.ts';
import * as refresh from './auth/refresh.ts';
import * as setup from './auth/setup.ts';
import * as bulk_jobsFeature from './bulk-jobs/index.ts';
import * as certificatesFeature from './certificates/index.ts';
import * as chainsFeature from './chains/index.ts';
import * as clientsFeature from './clients/index.ts';
import * as dns_providersFeature from './dns-providers/index.ts';
import * as eventsFeature from './events/index.ts';
import * as importsFeature from './imports/index.ts';
import * as inbound_profilesFeature from './inbound-profiles/index.ts';
import * as inboundsFeature from './inbounds/index.ts';
import * as nodesFeature from './nodes/index.ts';
import * as payment_providersFeature from './payment-providers/index.ts';
import * as paymentsFeature from './payments/index.ts';
import * as plansFeature from './plans/index.ts';
import * as settingsFeature from './settings/index.ts';
import * as statsFeature from './stats/index.ts';
import * as subscriptionsFeature from './subscriptions/index.ts';
import * as webhooksFeature from './webhooks/index.ts';

/** Every admin route, registered one by one (no long .openapi() chains: they slow the type checker). */
const routes = [
  methods,
  setup,
  login,
  oauth,
  refresh,
  logout,
  me,
  adminsList,
  adminsCreate,
  adminsGet,
  adminsUpdate,
  adminsDelete,
  auditList,
  nodesFeature,
  chainsFeature,
  statsFeature,
  inbound_profilesFeature,
  inboundsFeature,
  access_groupsFeature,
  certificatesFeature,
  clientsFeature,
  subscriptionsFeature,
  plansFeature,
  payment_providersFeature,
  paymentsFeature,
  dns_providersFeature,
  acme_accountsFeature,
  settingsFeature,
  webhooksFeature,
  eventsFeature,
  importsFeature,
  bulk_jobsFeature,
  api_tokensFeature,
];

export function registerRoutes(app: OpenAPIHono<AppEnv>, state: AdminState): void {
  for (const r of routes) r.register(app, state);
}
