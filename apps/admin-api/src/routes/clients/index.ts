import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';

/** Registers this resource's routes, one file per operation. */
export function register(_app: OpenAPIHono<AppEnv>): void {}
