import type { OpenAPIHono } from '@hono/zod-openapi';
import { EVENT_CATALOGUE, EVENT_TYPES, EVENT_VERSION, eventDescription, SIGNATURE_HEADER } from '@svc/domain';
import type { AppEnv } from '@svc/http';
import { z } from 'zod';

/**
 * The event catalogue as the OpenAPI 3.1 document's `webhooks` section (docs/events.md): one
 * entry per event type, the POST a subscribed endpoint receives, its envelope with the type's
 * `data` schema. What a generator or a reader of /api/v1/docs sees of the events.
 */
export function registerEventWebhooks(app: OpenAPIHono<AppEnv>): void {
  for (const type of EVENT_TYPES) {
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `event_${type.replace('.', '_')}`,
      tags: ['events'],
      summary: type,
      description: `${eventDescription(type)}\n\nDelivered at least once (skip an \`id\` seen before), signed (${SIGNATURE_HEADER}), to endpoints subscribed to \`${type}\` or to every type.`,
      request: {
        headers: z.object({
          [SIGNATURE_HEADER.toLowerCase()]: z
            .string()
            .meta({ description: 't=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>' }),
        }),
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                id: z.string().meta({ description: "the event's id: the same on every attempt" }),
                type: z.literal(type),
                version: z.literal(EVENT_VERSION[type]),
                occurred_at: z.string().meta({ description: 'ISO 8601, UTC' }),
                data: EVENT_CATALOGUE[type],
              }),
            },
          },
        },
      },
      responses: {
        200: { description: 'Any 2xx acknowledges the delivery; anything else, or no answer within 10 s, is retried with backoff.' },
      },
    });
  }
}
