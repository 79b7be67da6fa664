import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { fetchNodeLogs, LOG_LIMIT_MAX, parseLogSource } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';

export const LogSourceParam = z
  .enum(['agent', 'xray'])
  .optional()
  .openapi({ description: 'Which log: the agent or the engine (default xray)' });

export const LogLineSchema = z
  .object({
    timestamp_ms: z.number().int().openapi({ description: 'Unix time in milliseconds' }),
    source: z.enum(['agent', 'xray']),
    line: z.string(),
  })
  .openapi('NodeLogLine');

const LogsQuery = z.object({
  source: LogSourceParam,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LOG_LIMIT_MAX)
    .default(100)
    .openapi({ description: `The last N lines (1-${LOG_LIMIT_MAX}, default 100)` }),
});

export const route = defineRoute({
  method: 'get',
  path: '/nodes/{id}/logs',
  tags: ['nodes'],
  summary: "Snapshot of the node's agent or engine log (the last N lines, fetched from the agent)",
  description:
    'Logs carry customer addresses and destinations, so they are for owners and admins, not viewers. 504 when the agent does not answer within grpc.command_timeout_seconds (SVC_AGENT_COMMAND_TIMEOUT_SECONDS, default 10 s).',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam, query: LogsQuery },
  responses: {
    200: json(
      z.object({ node_id: z.string(), source: z.enum(['agent', 'xray']), lines: z.array(LogLineSchema) }).openapi('NodeLogs'),
      'The lines, oldest first',
    ),
    404: { description: 'No such node' },
    409: { description: 'The node is offline (code node-offline)' },
    504: { description: 'The agent did not answer in time' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const q = c.req.valid('query');
    return c.json(await fetchNodeLogs(actorContext(c), c.req.valid('param').id, { source: parseLogSource(q.source), limit: q.limit }), 200);
  });
