import { createRootRoute, createRoute, createRouter, useNavigate } from '@tanstack/react-router';
import { lazy } from 'react';
import { Frame } from './frame.tsx';
import { ROUTER_BASE } from './paths.ts';
import type { ClientsSearch } from './screens/clients.tsx';
import type { InboundsSearch } from './screens/inbounds.tsx';
import type { NodesSearch } from './screens/nodes.tsx';
import { NotFoundScreen } from './screens/not-found.tsx';
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

// Filters live in the URL (a reload, a shared link or the back button keeps them). Each screen
// reads only the values it knows; anything else in the query is dropped.
const oneOf =
  <T extends string>(...values: T[]) =>
  (v: unknown): T | undefined =>
    values.includes(v as T) ? (v as T) : undefined;
const id = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 320 ? v : undefined);
const strip = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const rootRoute = createRootRoute({ component: Frame, notFoundComponent: NotFoundScreen });

const dashboard = createRoute({ getParentRoute: () => rootRoute, path: '/', component: DashboardScreen });

const nodes = createRoute({
  getParentRoute: () => rootRoute,
  path: '/nodes',
  validateSearch: (s: Record<string, unknown>): NodesSearch =>
    strip({ connectivity: oneOf('online', 'offline')(s.connectivity), admin_status: oneOf('enabled', 'disabled')(s.admin_status) }),
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
    strip({ status: oneOf('pending', 'active', 'rejected', 'disabled')(s.status), email: text(s.email) }),
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

const routeTree = rootRoute.addChildren([dashboard, nodes, node, profiles, inbounds, groups, clients, subscriptions, subscription]);

export const router = createRouter({ routeTree, basepath: ROUTER_BASE, defaultPreload: false, scrollRestoration: true });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
