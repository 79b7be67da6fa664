import { createRootRoute, createRoute, createRouter, useNavigate } from '@tanstack/react-router';
import { lazy } from 'react';
import { Frame } from './frame.tsx';
import { AUDIT_SORTS, CLIENT_SORTS, NODE_SORTS, PAYMENT_SORTS, SUBSCRIPTION_SORTS, sortValues } from './list-sorts.ts';
import { ROUTER_BASE } from './paths.ts';
import type { AuditSearch } from './screens/audit-log.tsx';
import type { CertificatesSearch } from './screens/certificates.tsx';
import type { ClientsSearch } from './screens/clients.tsx';
import type { InboundsSearch } from './screens/inbounds.tsx';
import type { NodesSearch } from './screens/nodes.tsx';
import { NotFoundScreen } from './screens/not-found.tsx';
import type { PaymentsSearch } from './screens/payments.tsx';
import type { SubscriptionsSearch } from './screens/subscriptions.tsx';

// Each screen is its own chunk, fetched when first opened: the first load carries the frame only.
const ClientsScreen = lazy(() => import('./screens/clients.tsx').then((m) => ({ default: m.ClientsScreen })));
const DashboardScreen = lazy(() => import('./screens/dashboard.tsx').then((m) => ({ default: m.DashboardScreen })));
const GroupsScreen = lazy(() => import('./screens/groups.tsx').then((m) => ({ default: m.GroupsScreen })));
const InboundsScreen = lazy(() => import('./screens/inbounds.tsx').then((m) => ({ default: m.InboundsScreen })));
const NodeScreen = lazy(() => import('./screens/node.tsx').then((m) => ({ default: m.NodeScreen })));
const NodesScreen = lazy(() => import('./screens/nodes.tsx').then((m) => ({ default: m.NodesScreen })));
const ProfilesScreen = lazy(() => import('./screens/profiles.tsx').then((m) => ({ default: m.ProfilesScreen })));
const SubscriptionScreen = lazy(() => import('./screens/subscription.tsx').then((m) => ({ default: m.SubscriptionScreen })));
const SubscriptionsScreen = lazy(() => import('./screens/subscriptions.tsx').then((m) => ({ default: m.SubscriptionsScreen })));
const AdminsScreen = lazy(() => import('./screens/admins.tsx').then((m) => ({ default: m.AdminsScreen })));
const ApiTokensScreen = lazy(() => import('./screens/api-tokens.tsx').then((m) => ({ default: m.ApiTokensScreen })));
const AuditLogScreen = lazy(() => import('./screens/audit-log.tsx').then((m) => ({ default: m.AuditLogScreen })));
const PaymentsScreen = lazy(() => import('./screens/payments.tsx').then((m) => ({ default: m.PaymentsScreen })));
const PlansScreen = lazy(() => import('./screens/plans.tsx').then((m) => ({ default: m.PlansScreen })));
const CertificatesScreen = lazy(() => import('./screens/certificates.tsx').then((m) => ({ default: m.CertificatesScreen })));
const DnsProvidersScreen = lazy(() => import('./screens/dns-providers.tsx').then((m) => ({ default: m.DnsProvidersScreen })));
const AcmeAccountsScreen = lazy(() => import('./screens/acme-accounts.tsx').then((m) => ({ default: m.AcmeAccountsScreen })));
const PaymentProvidersScreen = lazy(() => import('./screens/payment-providers.tsx').then((m) => ({ default: m.PaymentProvidersScreen })));
const ChainsScreen = lazy(() => import('./screens/chains.tsx').then((m) => ({ default: m.ChainsScreen })));
const SettingsScreen = lazy(() => import('./screens/settings.tsx').then((m) => ({ default: m.SettingsScreen })));
const CustomerPagesScreen = lazy(() => import('./screens/customer-pages.tsx').then((m) => ({ default: m.CustomerPagesScreen })));
const WebhooksScreen = lazy(() => import('./screens/webhooks.tsx').then((m) => ({ default: m.WebhooksScreen })));

// Filters live in the URL (a reload, a shared link or the back button keeps them). Each screen
// reads only the values it knows; anything else in the query is dropped.
const oneOf =
  <T extends string>(...values: T[]) =>
  (v: unknown): T | undefined =>
    values.includes(v as T) ? (v as T) : undefined;
const id = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 320 ? v : undefined);
const date = (v: unknown): string | undefined => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : undefined);
/** A list's search text as its route takes it (at most 200 characters). */
const query = (v: unknown): string | undefined => {
  // The router reads search values as JSON: `?q=123` arrives as a number.
  const s = typeof v === 'number' ? String(v) : v;
  return typeof s === 'string' && s.trim().length > 0 && s.length <= 200 ? s : undefined;
};
const strip = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const rootRoute = createRootRoute({ component: Frame, notFoundComponent: NotFoundScreen });

const dashboard = createRoute({ getParentRoute: () => rootRoute, path: '/', component: DashboardScreen });

const nodes = createRoute({
  getParentRoute: () => rootRoute,
  path: '/nodes',
  validateSearch: (s: Record<string, unknown>): NodesSearch =>
    strip({
      connectivity: oneOf('online', 'offline')(s.connectivity),
      admin_status: oneOf('enabled', 'disabled')(s.admin_status),
      q: query(s.q),
      sort: oneOf(...sortValues(NODE_SORTS))(s.sort),
    }),
  component: function Nodes() {
    const search = nodes.useSearch();
    const navigate = useNavigate({ from: '/nodes' });
    return <NodesScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const node = createRoute({
  getParentRoute: () => rootRoute,
  path: '/nodes/$id',
  component: function Node() {
    const { id } = node.useParams();
    return <NodeScreen key={id} id={id} />;
  },
});

const profiles = createRoute({ getParentRoute: () => rootRoute, path: '/profiles', component: ProfilesScreen });

const inbounds = createRoute({
  getParentRoute: () => rootRoute,
  path: '/inbounds',
  validateSearch: (s: Record<string, unknown>): InboundsSearch => strip({ node_id: id(s.node_id) }),
  component: function Inbounds() {
    const search = inbounds.useSearch();
    const navigate = useNavigate({ from: '/inbounds' });
    return <InboundsScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const groups = createRoute({ getParentRoute: () => rootRoute, path: '/groups', component: GroupsScreen });

const clients = createRoute({
  getParentRoute: () => rootRoute,
  path: '/clients',
  validateSearch: (s: Record<string, unknown>): ClientsSearch =>
    strip({
      status: oneOf('pending', 'active', 'rejected', 'disabled')(s.status),
      q: query(s.q),
      sort: oneOf(...sortValues(CLIENT_SORTS))(s.sort),
    }),
  component: function Clients() {
    const search = clients.useSearch();
    const navigate = useNavigate({ from: '/clients' });
    return <ClientsScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const subscriptions = createRoute({
  getParentRoute: () => rootRoute,
  path: '/subscriptions',
  validateSearch: (s: Record<string, unknown>): SubscriptionsSearch =>
    strip({
      status: oneOf('active', 'limited', 'expired', 'disabled')(s.status),
      client_id: id(s.client_id),
      q: query(s.q),
      sort: oneOf(...sortValues(SUBSCRIPTION_SORTS))(s.sort),
      create: s.create === true || s.create === 'true' ? true : undefined,
    }),
  component: function Subscriptions() {
    const search = subscriptions.useSearch();
    const navigate = useNavigate({ from: '/subscriptions' });
    return <SubscriptionsScreen key={search.client_id ?? ''} search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const subscription = createRoute({
  getParentRoute: () => rootRoute,
  path: '/subscriptions/$id',
  component: function Subscription() {
    const { id } = subscription.useParams();
    return <SubscriptionScreen key={id} id={id} />;
  },
});

const plans = createRoute({ getParentRoute: () => rootRoute, path: '/plans', component: PlansScreen });

const payments = createRoute({
  getParentRoute: () => rootRoute,
  path: '/payments',
  validateSearch: (s: Record<string, unknown>): PaymentsSearch =>
    strip({
      status: oneOf('pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded')(s.status),
      q: query(s.q),
      sort: oneOf(...sortValues(PAYMENT_SORTS))(s.sort),
      from: date(s.from),
      to: date(s.to),
    }),
  component: function Payments() {
    const search = payments.useSearch();
    const navigate = useNavigate({ from: '/payments' });
    return <PaymentsScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const webhooks = createRoute({ getParentRoute: () => rootRoute, path: '/webhooks', component: WebhooksScreen });

const certificates = createRoute({
  getParentRoute: () => rootRoute,
  path: '/certificates',
  validateSearch: (s: Record<string, unknown>): CertificatesSearch => strip({ state: oneOf('expiring', 'failing')(s.state) }),
  component: function Certificates() {
    const search = certificates.useSearch();
    const navigate = useNavigate({ from: '/certificates' });
    return <CertificatesScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});
const dnsProviders = createRoute({ getParentRoute: () => rootRoute, path: '/dns-providers', component: DnsProvidersScreen });
const acmeAccounts = createRoute({ getParentRoute: () => rootRoute, path: '/acme-accounts', component: AcmeAccountsScreen });

const paymentProviders = createRoute({ getParentRoute: () => rootRoute, path: '/payment-providers', component: PaymentProvidersScreen });

const chains = createRoute({ getParentRoute: () => rootRoute, path: '/chains', component: ChainsScreen });

const settings = createRoute({ getParentRoute: () => rootRoute, path: '/settings', component: SettingsScreen });

const customerPages = createRoute({ getParentRoute: () => rootRoute, path: '/customer-pages', component: CustomerPagesScreen });

const admins = createRoute({ getParentRoute: () => rootRoute, path: '/admins', component: AdminsScreen });
const apiTokens = createRoute({ getParentRoute: () => rootRoute, path: '/api-tokens', component: ApiTokensScreen });

const auditLog = createRoute({
  getParentRoute: () => rootRoute,
  path: '/audit-log',
  validateSearch: (s: Record<string, unknown>): AuditSearch =>
    strip({
      actor_id: id(s.actor_id),
      entity_type: text(s.entity_type),
      entity_id: text(s.entity_id),
      from: date(s.from),
      to: date(s.to),
      q: query(s.q),
      sort: oneOf(...sortValues(AUDIT_SORTS))(s.sort),
    }),
  component: function AuditLog() {
    const search = auditLog.useSearch();
    const navigate = useNavigate({ from: '/audit-log' });
    return <AuditLogScreen search={search} setSearch={(next) => navigate({ search: strip(next) })} />;
  },
});

const routeTree = rootRoute.addChildren([
  dashboard,
  nodes,
  node,
  profiles,
  inbounds,
  groups,
  clients,
  subscriptions,
  subscription,
  plans,
  payments,
  webhooks,
  admins,
  apiTokens,
  auditLog,
  settings,
  customerPages,
  certificates,
  dnsProviders,
  acmeAccounts,
  paymentProviders,
  chains,
]);

export const router = createRouter({ routeTree, basepath: ROUTER_BASE, defaultPreload: false, scrollRestoration: true });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
