import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import * as adminsCreate from './admins/create.ts';
import * as adminsDelete from './admins/delete.ts';
import * as adminsGet from './admins/get.ts';
import * as adminsList from './admins/list.ts';
import * as adminsUpdate from './admins/update.ts';
import * as auditList from './audit-log/list.ts';
import * as login from './auth/login.ts';
import * as logout from './auth/logout.ts';
import * as me from './auth/me.ts';
import * as methods from './auth/methods.ts';
import * as refresh from './auth/refresh.ts';
import * as setup from './auth/setup.ts';

/** Every admin route, registered one by one (no long .openapi() chains: they slow the type checker). */
const routes = [methods, setup, login, refresh, logout, me, adminsList, adminsCreate, adminsGet, adminsUpdate, adminsDelete, auditList];

export function registerRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const r of routes) r.register(app);
}
