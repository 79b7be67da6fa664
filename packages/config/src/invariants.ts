import { mailTransportOf } from './mail-transport.ts';
import type { Config } from './schema.ts';

/**
 * Spec 5.9 rule 3: combinations that would leave nobody able to sign in, or accept
 * registrations that can never be confirmed. Each broken rule is one readable sentence.
 */
export function checkInvariants(config: Config): string[] {
  const broken: string[] = [];
  if (!config.auth.password_login && Object.keys(config.auth.oauth).length === 0) {
    broken.push(
      'auth.password_login is off (SVC_AUTH_PASSWORD_LOGIN=false) but no admin OAuth provider is configured under auth.oauth: no administrator could sign in',
    );
  }
  if (config.portal_auth.registration !== 'closed' && config.portal_auth.password_login && mailTransportOf(config) === 'none') {
    broken.push(
      `portal_auth.registration is ${config.portal_auth.registration} with portal password sign-in on, but no mail transport is configured (SVC_SMTP_URL, or SVC_MAIL_OUTBOX=true to write mails into <data_dir>/outbox): registrations could never be confirmed`,
    );
  }
  for (const [section, providers] of [
    ['auth', config.auth.oauth],
    ['portal_auth', config.portal_auth.oauth],
  ] as const) {
    for (const [name, p] of Object.entries(providers)) {
      if (name === 'google' || name === 'github' || p.issuer) continue;
      if (!(p.authorization_endpoint && p.token_endpoint && p.userinfo_endpoint)) {
        broken.push(
          `${section}.oauth.${name} needs an issuer (OpenID Connect discovery) or authorization_endpoint, token_endpoint and userinfo_endpoint: only google and github have built-in endpoints`,
        );
      }
    }
  }
  return broken;
}
