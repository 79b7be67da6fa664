import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as create from './create.ts';
import * as del from './delete.ts';
import * as list from './list.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  for (const r of [list, create, del]) r.register(app);
}
