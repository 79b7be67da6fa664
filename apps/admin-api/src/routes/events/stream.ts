import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { type AdminLiveEvent, parseAdminLiveEvent, TOPICS, UnavailableError } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { streamSSE } from 'hono/streaming';
import type { AdminState } from '../../admin-state.ts';

/** Events are gathered this long and sent as one of each kind (a reconnecting fleet is a few events, not thousands). */
const FLUSH_MS = 300;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;
/** Ids sent per `nodes` event; more in one window are sent as {all: true} (refetch every node view). */
const MAX_IDS = 500;

export const route = defineRoute({
  method: 'get',
  path: '/events',
  tags: ['events'],
  summary: 'Live changes for the admin panel (server-sent events)',
  description:
    "One stream per tab. Events: `ready` once subscribed; `nodes` ({ids} or {all: true}): those nodes' view changed (connectivity, applied revision, an apply result); `changed` ({entities}): records of these entity types (as the audit log names them) were written; `bulk_job` ({id, status, done, total, skipped}): a bulk job's progress, after each chunk and at its end; `resync`: events may have been lost (the bus reconnected), read everything again. Only ids and entity types travel: the records are read through their routes, with the caller's role. The stream ends when the access token expires (reconnect with a fresh one); comment lines keep it open through proxies.",
  auth: { scope: 'admin', roles: READERS },
  responses: {
    200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } },
    503: { description: 'Too many open event streams (Retry-After)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>, state: AdminState) =>
  app.openapi(route, async (c) => {
    const deps = c.get('deps');
    const { sid, exp } = c.get('auth');
    const release = state.eventStreams.take(sid);
    if (!release) throw new UnavailableError('too many open event streams', 5);

    const nodes = new Set<string>();
    let allNodes = false;
    const entities = new Set<string>();
    /** The latest progress of each bulk job heard in this window. */
    const bulkJobs = new Map<string, Extract<AdminLiveEvent, { type: 'bulk_job' }>>();
    let resync = false;
    let wake: (() => void) | null = null;
    const poke = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const take = (e: AdminLiveEvent) => {
      if (e.type === 'nodes') {
        for (const id of e.ids) if (nodes.size < MAX_IDS) nodes.add(id);
        if (e.ids.length > 0 && nodes.size >= MAX_IDS) allNodes = true;
      } else if (e.type === 'bulk_job') {
        if (bulkJobs.size < MAX_IDS || bulkJobs.has(e.id)) bulkJobs.set(e.id, e);
      } else for (const t of e.entities) entities.add(t);
      poke();
    };
    let unsubscribe: (() => Promise<void>) | null = null;
    try {
      unsubscribe = await deps.bus.subscribe(TOPICS.adminEvents, (m) => {
        const e = parseAdminLiveEvent(m);
        if (e) take(e);
      });
    } catch (err) {
      release();
      throw err;
    }
    const stopReconnect = deps.bus.onReconnect?.(() => {
      resync = true;
      poke();
    });

    return streamSSE(c, async (stream) => {
      let live = true;
      const end = () => {
        live = false;
        poke();
      };
      stream.onAbort(end);
      // The token's lifetime bounds the stream: a revoked or demoted admin stops hearing within it.
      const expiry = setTimeout(end, Math.max(0, exp * 1000 - Date.now()));
      try {
        await stream.writeSSE({ event: 'ready', data: '{}' });
        while (live) {
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, KEEPALIVE_MS);
          });
          clearTimeout(timer);
          if (!live) break;
          let sent = false;
          // Gather what arrives in the next moment with what woke us.
          if (nodes.size > 0 || entities.size > 0 || bulkJobs.size > 0) await new Promise((r) => setTimeout(r, FLUSH_MS));
          if (resync) {
            resync = false;
            await stream.writeSSE({ event: 'resync', data: '{}' });
            sent = true;
          }
          if (allNodes || nodes.size > 0) {
            const data = allNodes ? { all: true } : { ids: [...nodes] };
            nodes.clear();
            allNodes = false;
            await stream.writeSSE({ event: 'nodes', data: JSON.stringify(data) });
            sent = true;
          }
          if (entities.size > 0) {
            const data = { entities: [...entities] };
            entities.clear();
            await stream.writeSSE({ event: 'changed', data: JSON.stringify(data) });
            sent = true;
          }
          for (const { type: _, ...job } of bulkJobs.values()) {
            await stream.writeSSE({ event: 'bulk_job', data: JSON.stringify(job) });
            sent = true;
          }
          bulkJobs.clear();
          if (!sent) await stream.write(': keepalive\n\n');
        }
      } finally {
        clearTimeout(expiry);
        stopReconnect?.();
        await unsubscribe?.().catch(() => {});
        release();
      }
    }) as never;
  });
