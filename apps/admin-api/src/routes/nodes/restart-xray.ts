import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { restartXray } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';

export const CommandAccepted = z
  .object({ command_id: z.string().openapi({ description: 'Identifies the command sent to the agent' }) })
  .openapi('NodeCommandAccepted');

export const route = defineRoute({
  method: 'post',
  path: '/nodes/{id}/restart-xray',
  tags: ['nodes'],
  summary: 'Restart the Xray engine on the node (sent to the agent through its stream)',
  description:
    "202 once the gateway replica holding the node's stream has sent the command; the restart itself shows in the node's next status report.",
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    202: json(CommandAccepted, 'Sent to the agent'),
    404: { description: 'No such node' },
    409: { description: 'The node is offline (code node-offline)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await restartXray(actorContext(c), c.req.valid('param').id), 202));
