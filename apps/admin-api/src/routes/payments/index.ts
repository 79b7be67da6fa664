import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as get from './get.ts';
import * as list from './list.ts';
import * as settle from './settle.ts';

/** Registers this resource's routes, one file per operation (read; manual payments are settled by hand). */
export function register(app: OpenAPIHono<AppEnv>): void {
  for (const r of [list, get, settle]) r.register(app);
}
