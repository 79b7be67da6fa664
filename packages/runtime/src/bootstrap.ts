import { beginBootstrap } from '@svc/domain';
import type { Runtime } from './runtime.ts';

/**
 * Spec 3.4 at start: with no admin, a new one-time setup token goes to the process log
 * (the only secret ever logged, because the spec makes the log the proof of operator access).
 */
export async function announceBootstrap(rt: Runtime, setupUrl?: string): Promise<string | null> {
  const token = await beginBootstrap(rt.deps);
  if (token) {
    rt.log.warn(
      { setup_token: token, ...(setupUrl ? { setup_url: setupUrl } : {}) },
      `bootstrap mode: no admin exists. setup_token=${token} - POST it with an email and password to /api/v1/setup (or run: svc admin create --email E --role owner)`,
    );
  }
  return token;
}
