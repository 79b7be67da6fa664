import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { CLIENT_LIST, listClients } from '@svc/domain';
import { type AppEnv, defineRoute, listPageOf, listQuery, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { ClientSchema, ClientStatus } from './schemas.ts';

export const ClientPage = listPageOf(ClientSchema, 'ClientPage');

export const route = defineRoute({
  method: 'get',
  path: '/clients',
  tags: ['clients'],
  summary: 'List clients, oldest first unless sorted; status=pending is the application queue; q searches',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      ...listQuery(CLIENT_LIST, 'an id or email by its start; from 3 characters, anywhere in the email or note'),
      status: ClientStatus.optional(),
      email: z.string().max(254).optional().openapi({ description: 'exact address, case-insensitive' }),
    }),
  },
  responses: { 200: json(ClientPage, 'A page of clients') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listClients(c.get('deps'), c.req.valid('query'))), 200));
