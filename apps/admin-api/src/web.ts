import type { Config } from '@svc/config';
import { type AppEnv, publicPrefixOf, registerWebApp, webAppDir } from '@svc/http';
import type { Hono } from 'hono';

export const ADMIN_WEB_PATH = '/admin';

/**
 * The admin panel (apps/admin-web) at /admin/ beside /api/v1, same origin. Its files come from
 * http.admin_web_dir (SVC_ADMIN_WEB_DIR; the images set it) or else the workspace's build.
 */
export function registerAdminWeb(root: Hono<AppEnv>, config: Config): void {
  registerWebApp(root, {
    mountAt: ADMIN_WEB_PATH,
    dir: webAppDir(config.http.admin_web_dir, 'admin-web', import.meta.url),
    publicPrefix: publicPrefixOf(config.http.public_base_url),
  });
}
