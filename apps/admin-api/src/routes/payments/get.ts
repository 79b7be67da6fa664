import type { OpenAPIHono } from '@hono/zod-openapi';
import { getPayment } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { PaymentSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/payments/{id}',
  tags: ['payments'],
  summary: 'One payment',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(PaymentSchema, 'The payment'), 404: problem('No such payment') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getPayment(c.get('deps'), c.req.valid('param').id), 200));
