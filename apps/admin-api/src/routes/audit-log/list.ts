import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { AUDIT_LIST, listAuditLog } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, listPageOf, listQuery, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';

export const AuditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string().openapi({ format: 'date-time' }),
    actor_type: z.enum(['admin', 'client', 'system', 'anonymous', 'node']),
    actor_id: z.string().nullable(),
    action: z.string(),
    entity_type: z.string().nullable(),
    entity_id: z.string().nullable(),
    ip: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi('AuditEntry');

export const AuditPage = listPageOf(AuditEntrySchema, 'AuditPage');
export type AuditPageBody = z.infer<typeof AuditPage>;

const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const route = defineRoute({
  method: 'get',
  path: '/audit-log',
  tags: ['audit'],
  summary: 'Audit log, newest first unless sort=created; from inclusive, to exclusive; q searches',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      ...listQuery(AUDIT_LIST, 'an action by its start (subscription. is every subscription action); an entity, actor or entry id exactly'),
      actor_id: z.string().max(64).optional(),
      entity_type: z.string().max(64).optional(),
      entity_id: z.string().max(128).optional(),
      from: Instant.optional().openapi({ type: 'string', format: 'date-time' }),
      to: Instant.optional().openapi({ type: 'string', format: 'date-time' }),
    }),
  },
  responses: { 200: json(AuditPage, 'A page of entries') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listAuditLog(actorContext(c), c.req.valid('query'))), 200));
