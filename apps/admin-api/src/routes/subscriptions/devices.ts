import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { subscriptionDevices } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';

const Instant = z.string().openapi({ format: 'date-time' });

export const RegisteredDeviceSchema = z
  .object({
    id: z.string(),
    hwid: z.string().openapi({ description: 'x-hwid as the app sent it' }),
    os: z.string().nullable().openapi({ description: 'x-device-os' }),
    os_version: z.string().nullable().openapi({ description: 'x-ver-os' }),
    model: z.string().nullable().openapi({ description: 'x-device-model' }),
    user_agent: z.string().nullable(),
    first_seen_at: Instant,
    last_seen_at: Instant,
  })
  .openapi('RegisteredDevice');

export const SubscriptionDevicesSchema = z
  .object({
    subscription_id: z.string(),
    device_limit: z.number().int().nullable().openapi({ description: 'Devices at once (null: no limit)' }),
    registered: z
      .array(RegisteredDeviceSchema)
      .openapi({ description: 'Devices registered by the HWID headers of link fetches, oldest first' }),
    online: z
      .array(
        z.object({
          address: z.string().openapi({ description: 'IPv4, or an IPv6 /64 written 2001:db8:1:2::/64' }),
          node_id: z.string(),
          node_name: z.string(),
          first_seen_at: Instant,
          seen_at: Instant.openapi({ description: 'Since when the node lists it (a refused one no longer listed: when it stopped)' }),
          denied_at: Instant.nullable().openapi({ description: 'Refused by the fleet-wide device count since then' }),
        }),
      )
      .openapi({ description: "Client addresses on the subscription's live connections, per online node" }),
    denied: z.array(z.string()).openapi({ description: 'Addresses the fleet-wide device count refuses now' }),
  })
  .openapi('SubscriptionDevices');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/devices',
  tags: ['subscriptions'],
  summary: 'Devices of the subscription: registered by its apps (HWID), online addresses per node, and what the device limit refuses',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(SubscriptionDevicesSchema, 'The devices'), 404: problem('No such subscription') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await subscriptionDevices(c.get('deps'), c.req.valid('param').id), 200));
