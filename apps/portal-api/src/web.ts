import type { Config } from '@svc/config';
import { type AppEnv, publicPrefixOf, registerWebApp, webAppDir } from '@svc/http';
import type { Hono } from 'hono';

export const PORTAL_WEB_PATH = '/portal';

/**
 * The customer portal (apps/portal-web) at /portal/, same origin as its API, /portal/v1, which
 * stays the API's (reserved): an unknown /portal/v1 path is the API's 404 problem, never the
 * app's page. Files from http.portal_web_dir (SVC_PORTAL_WEB_DIR; the images set it) or else the
 * workspace's build.
 */
export function registerPortalWeb(root: Hono<AppEnv>, config: Config): void {
  registerWebApp(root, {
    mountAt: PORTAL_WEB_PATH,
    dir: webAppDir(config.http.portal_web_dir, 'portal-web', import.meta.url),
    publicPrefix: publicPrefixOf(config.http.public_base_url),
    reserved: [`${PORTAL_WEB_PATH}/v1`],
  });
}
