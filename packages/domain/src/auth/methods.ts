import type { Config } from '@svc/config';
import { NotFoundError } from '../errors.ts';

export type AdminMethod = 'password' | `oauth:${string}`;

/** Sign-in methods of the admin panel that are switched on (spec 5.9). */
export function adminMethods(config: Config): { password: boolean; oauth: string[] } {
  return { password: config.auth.password_login, oauth: Object.keys(config.auth.oauth).sort() };
}

/** Spec 5.9 rule 1: a switched-off method's routes answer 404, as if they did not exist. */
export function assertAdminMethodEnabled(config: Config, method: AdminMethod): void {
  const on = method === 'password' ? config.auth.password_login : method.slice(6) in config.auth.oauth;
  if (!on) throw new NotFoundError('route');
}
