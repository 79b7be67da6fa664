import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as get from './get.ts';
import * as list from './list.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  for (const r of [list, get]) r.register(app);
}
