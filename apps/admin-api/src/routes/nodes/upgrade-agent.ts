import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { requestAgentUpgrade, UnavailableError } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { agentReleaseOffer, NO_RELEASE } from '../../agent-files.ts';
import { IdParam, json } from '../../schemas.ts';

export const UpgradeAccepted = z
  .object({
    command_id: z.string().openapi({ description: 'Identifies the command sent to the agent; the node view’s agent_upgrade follows it' }),
    version: z.string().openapi({ description: 'The release the agent was asked to install (the one this control plane serves)' }),
  })
  .openapi('NodeAgentUpgradeAccepted');

export const route = defineRoute({
  method: 'post',
  path: '/nodes/{id}/upgrade-agent',
  tags: ['nodes'],
  summary: "Upgrade the node's agent to the release this control plane serves (sent through its stream)",
  description:
    'Not in the spec (our extension, docs/agent.md "Upgrades"). The agent downloads GET /agent/{version}/{file} from this control plane, ' +
    'refuses it unless its SHA-256 matches, swaps it in and restarts under systemd; the engine keeps serving (users keep their connections). ' +
    "202 once the gateway replica holding the node's stream has sent the command; the node view's agent_upgrade says pending, then succeeded " +
    '(Hello carries the new version) or failed with the agent’s words (the old agent was put back). Needs an agent installed by install.sh.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    202: json(UpgradeAccepted, 'Sent to the agent'),
    404: { description: 'No such node' },
    409: {
      description:
        'The node is offline (node-offline), runs this release or a newer one already (agent-current), or runs an agent that is not svc-agent (agent-foreign)',
    },
    503: { description: 'This control plane has no agent release to serve (build it, or set SVC_AGENT_DIST_DIR)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = actorContext(c);
    const offer = agentReleaseOffer(ctx.config);
    if (!offer) throw new UnavailableError(NO_RELEASE);
    return c.json(await requestAgentUpgrade(ctx, c.req.valid('param').id, offer), 202);
  });
