import { createRootRoute, createRoute, createRouter, Navigate, useNavigate } from '@tanstack/react-router';
import { type ComponentType, lazy, type ReactNode, useState } from 'react';
import { Busy, Frame } from './frame.tsx';
import { loadAccountTexts } from './i18n.ts';
import { ROUTER_BASE } from './paths.ts';
import { NotFoundScreen } from './screens/not-found.tsx';
import type { SignInSearch } from './screens/sign-in.tsx';
import { useSessionState } from './session-state.ts';

// Each screen is its own chunk: the first load carries the frame only, and a reload with a
// session never loads the sign-in screens.
// The screens of a signed-in customer come with their texts (locales/account: i18n.ts).
const withTexts =
  <T,>(load: () => Promise<T>) =>
  () =>
    Promise.all([load(), loadAccountTexts()]).then(([m]) => m);
const HomeScreen = lazy(withTexts(() => import('./screens/home.tsx').then((m) => ({ default: m.HomeScreen }))));
const SignInScreen = lazy(() => import('./screens/sign-in.tsx').then((m) => ({ default: m.SignInScreen })));
const RegisterScreen = lazy(() => import('./screens/register.tsx').then((m) => ({ default: m.RegisterScreen })));
const ForgotPasswordScreen = lazy(() => import('./screens/forgot-password.tsx').then((m) => ({ default: m.ForgotPasswordScreen })));
const MagicLinkScreen = lazy(() => import('./screens/magic-link.tsx').then((m) => ({ default: m.MagicLinkScreen })));
const PlansScreen = lazy(withTexts(() => import('./screens/plans.tsx').then((m) => ({ default: m.PlansScreen }))));
const CheckoutScreen = lazy(withTexts(() => import('./screens/checkout.tsx').then((m) => ({ default: m.CheckoutScreen }))));
const PaymentsScreen = lazy(withTexts(() => import('./screens/payments.tsx').then((m) => ({ default: m.PaymentsScreen }))));
const PaymentScreen = lazy(withTexts(() => import('./screens/payment.tsx').then((m) => ({ default: m.PaymentScreen }))));
const SettingsScreen = lazy(withTexts(() => import('./screens/settings.tsx').then((m) => ({ default: m.SettingsScreen }))));

const oneOf =
  <T extends string>(...values: T[]) =>
  (v: unknown): T | undefined =>
    values.includes(v as T) ? (v as T) : undefined;
const strip = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const rootRoute = createRootRoute({ component: Frame, notFoundComponent: NotFoundScreen });

/** My subscriptions when signed in; else the sign-in screen, the method chosen in the URL (?with=). */
const home = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  validateSearch: (s: Record<string, unknown>): SignInSearch => strip({ with: oneOf('password', 'link')(s.with) }),
  component: function Home() {
    const state = useSessionState();
    const search = home.useSearch();
    const navigate = useNavigate({ from: '/' });
    if (state === 'resuming') return <Busy />;
    // The end of linking a provider from the settings (#oauth=linked, #oauth_error=…): said there.
    if (state === 'signed-in' && window.location.hash.startsWith('#oauth'))
      return <Navigate to="/settings" hash={window.location.hash.slice(1)} replace />;
    if (state === 'signed-in') return <HomeScreen />;
    return <SignInScreen search={search} setSearch={(next) => navigate({ search: strip(next), replace: true })} />;
  },
});

/**
 * A screen of a signed-in customer. Signed out (a bookmark, the way back from a payment page in a
 * new browser), the sign-in form shows in its place and the screen follows at the same address.
 */
function SignedIn({ children }: { children: ReactNode }) {
  const state = useSessionState();
  const [search, setSearch] = useState<SignInSearch>({});
  if (state === 'resuming') return <Busy />;
  if (state === 'signed-out') return <SignInScreen search={search} setSearch={(next) => setSearch(strip(next))} />;
  return <>{children}</>;
}

const idParam = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : undefined);

export interface PlansSearch {
  /** The subscription to renew (more time for it) instead of buying a new one. */
  renew?: string;
}
const plans = createRoute({
  getParentRoute: () => rootRoute,
  path: '/plans',
  validateSearch: (s: Record<string, unknown>): PlansSearch => strip({ renew: idParam(s.renew) }),
  component: function Plans() {
    return (
      <SignedIn>
        <PlansScreen search={plans.useSearch()} />
      </SignedIn>
    );
  },
});

export interface CheckoutSearch {
  plan?: string;
  renew?: string;
}
const checkout = createRoute({
  getParentRoute: () => rootRoute,
  path: '/checkout',
  validateSearch: (s: Record<string, unknown>): CheckoutSearch => strip({ plan: idParam(s.plan), renew: idParam(s.renew) }),
  component: function Checkout() {
    const search = checkout.useSearch();
    if (!search.plan) return <Navigate to="/plans" replace />;
    return (
      <SignedIn>
        <CheckoutScreen planId={search.plan} {...(search.renew ? { renew: search.renew } : {})} />
      </SignedIn>
    );
  },
});

const payments = createRoute({
  getParentRoute: () => rootRoute,
  path: '/payments',
  component: () => (
    <SignedIn>
      <PaymentsScreen />
    </SignedIn>
  ),
});

export interface PaymentSearch {
  /** How the payer left the provider's page (billing.return_url adds it): success or canceled. */
  outcome?: 'success' | 'canceled';
}
const payment = createRoute({
  getParentRoute: () => rootRoute,
  path: '/payments/$id',
  validateSearch: (s: Record<string, unknown>): PaymentSearch => strip({ outcome: oneOf('success', 'canceled')(s.outcome) }),
  component: function Payment() {
    const { id } = payment.useParams();
    const { outcome } = payment.useSearch();
    return (
      <SignedIn>
        <PaymentScreen id={id} {...(outcome ? { outcome } : {})} />
      </SignedIn>
    );
  },
});

const settings = createRoute({
  getParentRoute: () => rootRoute,
  path: '/settings',
  component: () => (
    <SignedIn>
      <SettingsScreen />
    </SignedIn>
  ),
});

/** A screen for signed-out visitors only: signed in, it is the home screen. */
const signedOutOnly = (Screen: ComponentType) =>
  function SignedOut() {
    const state = useSessionState();
    if (state === 'resuming') return <Busy />;
    if (state === 'signed-in') return <Navigate to="/" replace />;
    return <Screen />;
  };

const register = createRoute({ getParentRoute: () => rootRoute, path: '/register', component: signedOutOnly(RegisterScreen) });
const forgotPassword = createRoute({
  getParentRoute: () => rootRoute,
  path: '/forgot-password',
  component: signedOutOnly(ForgotPasswordScreen),
});
// Where a mailed sign-in link lands (#token=… in the fragment): open to anyone, signed in or not.
const magicLink = createRoute({ getParentRoute: () => rootRoute, path: '/auth/magic-link', component: MagicLinkScreen });

const routeTree = rootRoute.addChildren([home, register, forgotPassword, magicLink, plans, checkout, payments, payment, settings]);

export const router = createRouter({ routeTree, basepath: ROUTER_BASE, defaultPreload: false, scrollRestoration: true });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
