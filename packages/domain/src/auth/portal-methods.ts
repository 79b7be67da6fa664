import type { Config } from '@svc/config';
import { NotFoundError } from '../errors.ts';

/** What GET /portal/v1/auth/methods answers (spec 5.7, 5.9 rule 2): the sign-in form is built from it. */
export interface PortalMethods {
  /** Always on (spec 5.7): passwordless sign-in, email confirmation and access recovery. */
  magic_link: true;
  password: boolean;
  oauth: string[];
  registration: Config['portal_auth']['registration'];
}

export const portalMethods = (config: Config): PortalMethods => ({
  magic_link: true,
  password: config.portal_auth.password_login,
  oauth: Object.keys(config.portal_auth.oauth).sort(),
  registration: config.portal_auth.registration,
});

/** Spec 5.9 rule 1: portal password sign-in switched off -> its route answers 404. */
export function assertPortalPasswordEnabled(config: Config): void {
  if (!config.portal_auth.password_login) throw new NotFoundError('route');
}

/**
 * POST /portal/v1/auth/register exists when registration is not closed (spec 5.8) and password
 * sign-in is on (the route registers with a password; with it off, customers register through
 * OAuth, whose callback follows the mode).
 */
export function assertPasswordRegistrationOpen(config: Config): void {
  if (config.portal_auth.registration === 'closed' || !config.portal_auth.password_login) throw new NotFoundError('route');
}
