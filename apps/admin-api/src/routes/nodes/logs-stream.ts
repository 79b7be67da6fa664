import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { type LogLine, parseLogSource } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { streamSSE } from 'hono/streaming';
import type { AdminState } from '../../admin-state.ts';
import { IdParam } from '../../schemas.ts';
import { LogSourceParam } from './logs.ts';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

export const route = defineRoute({
  method: 'get',
  path: '/nodes/{id}/logs/stream',
  tags: ['nodes'],
  summary: "Live tail of the node's agent or engine log (server-sent events)",
  description:
    'Each `log` event carries a JSON array of lines ({timestamp_ms, source, line}). The agent tails while at least one client listens (start_log_stream), and stops when the last one leaves (stop_log_stream). If the node reconnects the tail resumes.',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam, query: z.object({ source: LogSourceParam }) },
  responses: {
    200: { description: 'text/event-stream of `log` events', content: { 'text/event-stream': { schema: z.string() } } },
    404: { description: 'No such node' },
    409: { description: 'The node is offline (code node-offline)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>, state: AdminState) =>
  app.openapi(route, async (c) => {
    const ctx = actorContext(c);
    const id = c.req.valid('param').id;
    const pending: LogLine[][] = [];
    let wake: (() => void) | null = null;
    // Opened before the response starts, so 404 and 409 are ordinary problem documents.
    const close = await state.logTails(ctx).open(ctx, id, parseLogSource(c.req.valid('query').source), (lines) => {
      pending.push(lines);
      const w = wake;
      wake = null;
      w?.();
    });
    return streamSSE(c, async (stream) => {
      let open = true;
      stream.onAbort(() => {
        open = false;
        const w = wake;
        wake = null;
        w?.();
      });
      try {
        await stream.writeSSE({ event: 'ready', data: JSON.stringify({ node_id: id }) });
        while (open) {
          const lines = pending.shift();
          if (lines) {
            await stream.writeSSE({ event: 'log', data: JSON.stringify(lines) });
            continue;
          }
          const timer = setTimeout(() => wake?.(), KEEPALIVE_MS);
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          clearTimeout(timer);
          if (open && pending.length === 0) await stream.write(': keepalive\n\n');
        }
      } finally {
        await close();
      }
    }) as never;
  });
