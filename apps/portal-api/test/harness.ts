import type { OpenAPIHono } from '@hono/zod-openapi';
import { mountAdminApi } from '@svc/admin-api';
import type { AppEnv } from '@svc/http';
import { login, OWNER, setupOwner, startTestServer, type TestServer } from '@svc/testkit';
import { expect } from 'vitest';
import { createPortalApi } from '../src/app.ts';

export interface PortalTestServer {
  s: TestServer;
  /** An owner's access token, to set the fleet up through the admin API (signIn renews it). */
  token: string;
  /** Signs the owner in again (a test that moved the clock past the token's 15 minutes). */
  signIn(): Promise<void>;
  /** POST to the admin API as the owner; the test fails unless it answers 201. */
  post(path: string, body: unknown): Promise<any>;
  stop(): Promise<void>;
}

/**
 * The portal with the admin API beside it on one server over the test database, as `svc start`
 * mounts them: the tests set the fleet up through the admin API and fetch links from the portal.
 */
export async function startPortal(
  env: Record<string, string>,
  config?: Record<string, unknown>,
  /** More surfaces on the same server (the worker's payment webhook ingress). */
  mountMore?: (root: OpenAPIHono<AppEnv>) => void,
): Promise<PortalTestServer> {
  const portal = createPortalApi();
  const s = await startTestServer({
    env,
    ...(config ? { config } : {}),
    mount: (root) => {
      root.route('/', portal.routes);
      mountMore?.(root);
      return mountAdminApi(root);
    },
  });
  const owner = { token: (await setupOwner(s)).access_token };
  return {
    s,
    get token() {
      return owner.token;
    },
    async signIn() {
      owner.token = (await login(s, OWNER.email, OWNER.password)).access_token;
    },
    async post(path, body) {
      const res = await s.api.post(path, body, { token: owner.token });
      expect(res.status, `${path} ${res.text}`).toBe(201);
      return res.body;
    },
    async stop() {
      await portal.stop();
      await s.stop();
    },
  };
}
