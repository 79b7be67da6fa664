import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listSubscriptions, SUBSCRIPTION_LIST } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, listPageOf, listQuery, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { SubscriptionSchema, SubscriptionStatus } from './schemas.ts';

export const SubscriptionPage = listPageOf(SubscriptionSchema, 'SubscriptionPage');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions',
  tags: ['subscriptions'],
  summary: 'List subscriptions, oldest first unless sorted; q searches',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      ...listQuery(
        SUBSCRIPTION_LIST,
        "an id or the client's email by its start; from 3 characters, anywhere in the client's email or the note",
      ),
      client_id: z.string().max(64).optional(),
      status: SubscriptionStatus.optional().openapi({ description: 'the status as of now, as the view shows it' }),
    }),
  },
  responses: { 200: json(SubscriptionPage, 'A page of subscriptions') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listSubscriptions(actorContext(c), c.req.valid('query'))), 200));
