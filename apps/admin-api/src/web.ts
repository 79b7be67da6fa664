import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
 * http.admin_web_dir, else the workspace's apps/admin-web/dist, found from this module upwards
 * (apps/ is an ancestor both of this source file and of an app's bundle, apps/<app>/dist/main.js).
 * The images set the directory explicitly.
 */
function adminWebDir(config: Config): string | null {
  if (config.http.admin_web_dir) return config.http.admin_web_dir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'admin-web', 'dist');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}
