import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as bulk from './bulk.ts';
import * as create from './create.ts';
import * as del from './delete.ts';
import * as deviceDelete from './device-delete.ts';
import * as devices from './devices.ts';
import * as get from './get.ts';
import * as link from './link.ts';
import * as list from './list.ts';
import * as rotate from './rotate-credentials.ts';
import * as update from './update.ts';
import * as usage from './usage.ts';
import * as usageByNode from './usage-by-node.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  for (const r of [list, bulk, create, get, update, del, rotate, link, usage, usageByNode, devices, deviceDelete]) r.register(app);
}
