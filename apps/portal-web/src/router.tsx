import { createRootRoute, createRoute, createRouter, Navigate, useNavigate } from '@tanstack/react-router';
import { type ComponentType, lazy } from 'react';
import { Busy, Frame } from './frame.tsx';
import { ROUTER_BASE } from './paths.ts';
import { NotFoundScreen } from './screens/not-found.tsx';
import type { SignInSearch } from './screens/sign-in.tsx';
import { useSessionState } from './session-state.ts';

// Each screen is its own chunk: the first load carries the frame only, and a reload with a
// session never loads the sign-in screens.
const HomeScreen = lazy(() => import('./screens/home.tsx').then((m) => ({ default: m.HomeScreen })));
const SignInScreen = lazy(() => import('./screens/sign-in.tsx').then((m) => ({ default: m.SignInScreen })));
const RegisterScreen = lazy(() => import('./screens/register.tsx').then((m) => ({ default: m.RegisterScreen })));
const ForgotPasswordScreen = lazy(() => import('./screens/forgot-password.tsx').then((m) => ({ default: m.ForgotPasswordScreen })));
const MagicLinkScreen = lazy(() => import('./screens/magic-link.tsx').then((m) => ({ default: m.MagicLinkScreen })));

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
    if (state === 'signed-in') return <HomeScreen />;
    return <SignInScreen search={search} setSearch={(next) => navigate({ search: strip(next), replace: true })} />;
  },
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

const routeTree = rootRoute.addChildren([home, register, forgotPassword, magicLink]);

export const router = createRouter({ routeTree, basepath: ROUTER_BASE, defaultPreload: false, scrollRestoration: true });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
