import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as stream from './stream.ts';

/** GET /api/v1/events: the admin panel's live stream. */
export function register(app: OpenAPIHono<AppEnv>): void {
  stream.register(app);
}
