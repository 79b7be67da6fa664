import { beginBootstrap } from '@svc/domain';
import type { Runtime } from './runtime.ts';

/**
 * Spec 3.4, before the server listens: with no admin, a new one-time setup token replaces
 * the last run's (so the old one is dead before the first request can use it). Returns a
 * function that writes it to the process log once the address is known (the only secret ever
 * logged: the spec makes the log the proof of operator access).
 */
export async function prepareBootstrap(rt: Runtime): Promise<{ token: string | null; announce(baseUrl?: string): void }> {
  const token = await beginBootstrap(rt.deps);
  return {
    token,
    announce(baseUrl) {
      if (!token) return;
      const setupUrl = baseUrl ? `${baseUrl}/api/v1/setup` : undefined;
      const panelUrl = baseUrl ? `${baseUrl}/admin/` : undefined;
      rt.log.warn(
        { setup_token: token, ...(setupUrl ? { setup_url: setupUrl, panel_url: panelUrl } : {}) },
        `bootstrap mode: no admin exists. setup_token=${token} - open ${panelUrl ?? 'the panel at /admin/'} and enter it with the owner's email and password (or POST them to /api/v1/setup, or run: svc admin create --email E --role owner)`,
      );
    },
  };
}
