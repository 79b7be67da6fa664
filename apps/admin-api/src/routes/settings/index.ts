import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as getCustomerPages from './get-customer-pages.ts';
import * as getOutbound from './get-outbound.ts';
import * as getSubscriptionLink from './get-subscription-link.ts';
import * as previewFormat from './preview-format.ts';
import * as updateCustomerPages from './update-customer-pages.ts';
import * as updateOutbound from './update-outbound.ts';
import * as updateSubscriptionLink from './update-subscription-link.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  getSubscriptionLink.register(app);
  updateSubscriptionLink.register(app);
  previewFormat.register(app);
  getOutbound.register(app);
  updateOutbound.register(app);
  getCustomerPages.register(app);
  updateCustomerPages.register(app);
}
