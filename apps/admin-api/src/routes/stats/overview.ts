import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { statsOverview } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';

const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const Count = z.number().int();

export const StatsOverviewSchema = z
  .object({
    nodes: z.object({ total: Count, online: Count, offline: Count, enabled: Count, disabled: Count }),
    subscriptions: z.object({ total: Count, active: Count, limited: Count, expired: Count, disabled: Count }),
    traffic: z.object({
      from: z.string().openapi({ format: 'date-time' }),
      to: z.string().openapi({ format: 'date-time' }),
      uplink_bytes: Count,
      downlink_bytes: Count,
      total_bytes: Count,
    }),
    certificates: z.object({
      total: Count,
      expired: Count,
      expiring_within_30_days: Count,
      next_expiry: z.string().nullable().openapi({ format: 'date-time', description: 'the soonest expiry still ahead' }),
      failing: z
        .number()
        .int()
        .openapi({ description: 'ACME certificates whose last issuance or renewal failed (their last_error is set)' }),
    }),
    revenue: z.object({
      from: z.string().openapi({ format: 'date-time' }),
      to: z.string().openapi({ format: 'date-time' }),
      by_currency: z.array(z.object({ currency: z.string(), amount: Count, payments: Count, refunded_amount: Count, refunds: Count })),
    }),
  })
  .openapi('StatsOverview');

export const route = defineRoute({
  method: 'get',
  path: '/stats/overview',
  tags: ['stats'],
  summary: 'Node and subscription counts now, and traffic of hourly usage with hour in [from, to)',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      from: Instant.optional().openapi({ type: 'string', format: 'date-time', description: 'Inclusive; default 24 h before to' }),
      to: Instant.optional().openapi({ type: 'string', format: 'date-time', description: 'Exclusive; default now' }),
    }),
  },
  responses: { 200: json(StatsOverviewSchema, 'The overview') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await statsOverview(c.get('deps'), c.req.valid('query')), 200));
