import { fileURLToPath } from 'node:url';
import type { Config } from '@svc/config';
import { type AppEnv, publicPrefixOf, registerWebApp } from '@svc/http';
import type { Hono } from 'hono';

export const ADMIN_WEB_PATH = '/admin';

/**
 * The admin panel (apps/admin-web) at /admin/ beside /api/v1, same origin. Its files come from
 * http.admin_web_dir (SVC_ADMIN_WEB_DIR; the images set it) or else the workspace's build.
 */
export function registerAdminWeb(root: Hono<AppEnv>, config: Config): void {
  registerWebApp(root, { mountAt: ADMIN_WEB_PATH, dir: adminWebDir(config), publicPrefix: publicPrefixOf(config.http.public_base_url) });
}

/**
 * http.admin_web_dir, else the workspace's apps/admin-web/dist: two levels up from this module,
 * whether it runs as source (apps/admin-api/src/web.ts) or inside an app's bundle
 * (apps/<app>/dist/main.js). The images set the directory explicitly.
 */
function adminWebDir(config: Config): string {
  return config.http.admin_web_dir ?? fileURLToPath(new URL('../../admin-web/dist/', import.meta.url));
}
