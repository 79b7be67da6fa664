import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import type { AdminState } from '../../admin-state.ts';
import * as stream from './stream.ts';

/** GET /api/v1/events: the admin panel's live stream. */
export function register(app: OpenAPIHono<AppEnv>, state: AdminState): void {
  stream.register(app, state);
}
