import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { updateInboundProfile } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { InboundProfileSchema, ProfileName, Protocol, ShadowsocksMethod, SniffingInput, StreamInput, VlessFlow } from './schemas.ts';

export const UpdateInboundProfileBody = z
  .object({
    name: ProfileName.optional(),
    protocol: Protocol.optional(),
    stream: StreamInput.optional().openapi({
      description:
        'Replaces the whole stream object (not merged: the settings depend on network and security). REALITY: the current private key and short ids are kept when omitted.',
    }),
    sniffing: SniffingInput.optional().openapi({ description: 'Merged field by field into the current sniffing settings' }),
    vless_flow: VlessFlow.nullable().optional().openapi({ description: 'null removes' }),
    shadowsocks_method: ShadowsocksMethod.nullable().optional().openapi({ description: 'null removes' }),
    block_bittorrent: z.boolean().optional(),
  })
  .strict()
  .openapi('UpdateInboundProfile');

export const route = defineRoute({
  method: 'patch',
  path: '/inbound-profiles/{id}',
  tags: ['inbound-profiles'],
  summary: 'Update an inbound profile (merge; `stream` replaces the stream as a whole)',
  description:
    'A change to anything but the name moves the desired revision of every node with an inbound of this profile. The rules of creation apply to the merged result.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateInboundProfileBody) },
  responses: { 200: json(InboundProfileSchema, 'Updated'), 404: problem('No such profile'), 409: problem('Name taken') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateInboundProfile(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
