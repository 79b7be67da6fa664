import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as overview from './overview.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>): void {
  overview.register(app);
}
