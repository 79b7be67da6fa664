import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalDevices, portalRemoveDevice } from '@svc/domain';
import { type AppEnv, defineRoute, json } from '@svc/http';
import { portalContext } from './portal-context.ts';

const Instant = z.string().openapi({ format: 'date-time' });

export const PortalDevicesSchema = z
  .object({
    items: z.array(
      z.object({
        subscription_id: z.string(),
        device_limit: z.number().int().nullable().openapi({ description: 'Devices at once (null: no limit)' }),
        registered: z.array(
          z.object({
            id: z.string(),
            hwid: z.string(),
            os: z.string().nullable(),
            os_version: z.string().nullable(),
            model: z.string().nullable(),
            user_agent: z.string().nullable(),
            first_seen_at: Instant,
            last_seen_at: Instant,
          }),
        ),
        online: z.array(
          z.object({
            address: z.string(),
            node_id: z.string(),
            node_name: z.string(),
            first_seen_at: Instant,
            seen_at: Instant,
            denied_at: Instant.nullable(),
          }),
        ),
        denied: z.array(z.string()),
      }),
    ),
  })
  .openapi('PortalDevices');

export const listRoute = defineRoute({
  method: 'get',
  path: '/devices',
  tags: ['subscriptions'],
  summary: 'Your devices, per subscription: those your apps registered, the addresses connected now, and what the device limit refuses',
  auth: { scope: 'client' },
  responses: { 200: json(PortalDevicesSchema, 'Your devices') },
});

export const deleteRoute = defineRoute({
  method: 'delete',
  path: '/devices/{deviceId}',
  tags: ['subscriptions'],
  summary: 'Remove a registered device of yours (frees its place; another client’s device is 404)',
  auth: { scope: 'client' },
  request: {
    params: z.object({
      deviceId: z
        .string()
        .min(1)
        .max(64)
        .openapi({ param: { name: 'deviceId', in: 'path' } }),
    }),
  },
  responses: { 204: { description: 'Removed' }, 404: { description: 'No such device of yours' } },
});

export const register = (app: OpenAPIHono<AppEnv>) => {
  app.openapi(listRoute, async (c) => c.json({ items: await portalDevices(portalContext(c)) }, 200));
  app.openapi(deleteRoute, async (c) => {
    await portalRemoveDevice(portalContext(c), c.req.valid('param').deviceId);
    return c.body(null, 204);
  });
};
