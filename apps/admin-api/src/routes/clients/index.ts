import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as approve from './approve.ts';
import * as bulk from './bulk.ts';
import * as create from './create.ts';
import * as del from './delete.ts';
import * as get from './get.ts';
import * as list from './list.ts';
import * as reject from './reject.ts';
import * as update from './update.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  for (const r of [list, bulk, create, get, update, del, approve, reject]) r.register(app);
}
