import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as callback from './auth/callback.ts';
import * as login from './auth/login.ts';
import * as logout from './auth/logout.ts';
import * as logoutEverywhere from './auth/logout-everywhere.ts';
import * as magicLink from './auth/magic-link.ts';
import * as methods from './auth/methods.ts';
import { registerPortalOAuthRoutes } from './auth/oauth-routes.ts';
import * as refresh from './auth/refresh.ts';
import * as registerRoute from './auth/register.ts';
import * as branding from './branding.ts';
import * as checkout from './checkout/checkout.ts';
import * as payments from './checkout/payments.ts';
import * as devices from './devices.ts';
import * as me from './me.ts';
import * as password from './password.ts';
import * as paymentMethods from './payment-methods.ts';
import * as plans from './plans.ts';
import * as link from './subscriptions/link.ts';
import * as rotate from './subscriptions/rotate-credentials.ts';
import * as usage from './subscriptions/usage.ts';

/** Every /portal/v1 route (spec 4.6), registered explicitly. */
const ROUTES = [
  methods,
  branding,
  registerRoute,
  login,
  magicLink,
  callback,
  refresh,
  logout,
  logoutEverywhere,
  me,
  password,
  usage,
  rotate,
  link,
  devices,
  plans,
  paymentMethods,
  checkout,
  payments,
];

export function registerPortalRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const r of ROUTES) r.register(app);
  registerPortalOAuthRoutes(app);
}
