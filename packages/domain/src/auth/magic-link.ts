import type { Config } from '@svc/config';
import { formatDuration } from '@svc/format';
import { z } from 'zod';
import { recordAudit } from '../audit/record-audit.ts';
import { clientMaySignIn } from '../clients/client-status.ts';
import { confirmClientEmail } from '../clients/confirm-client-email.ts';
import { UnauthenticatedError } from '../errors.ts';
import { queueMailAfterCommit } from '../notifications/queue-mail.ts';
import { anonymous, type DomainDeps } from '../shared/context.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { rememberClientAddress } from './client-known-addresses.ts';
import { clientSignInRefusal } from './client-sign-in-refusal.ts';
import { Email } from './credential-fields.ts';
import { browserMatches } from './oauth/browser-binding.ts';
import { addressKey, enforceRateLimit, spendBudget } from './rate-limit.ts';
import { issueSession, type RequestMeta, type TokenPair } from './sessions.ts';

/** Spec 8: 15 minutes, single use. */
export const MAGIC_LINK_TTL_MS = 15 * 60_000;

export const MagicLinkRequestInput = z.object({ email: Email }).strict().brand<'MagicLinkRequestInput'>();
export type MagicLinkRequestInput = z.output<typeof MagicLinkRequestInput>;

/** 32 random bytes, base64url: 43 characters; anything longer is not one of ours. */
export const MagicLinkCallbackInput = z
  .object({ token: z.string().min(1).max(128).meta({ description: 'the token from the link' }) })
  .strict()
  .brand<'MagicLinkCallbackInput'>();
export type MagicLinkCallbackInput = z.output<typeof MagicLinkCallbackInput>;

/**
 * The URL a mail carries: portal_auth.link_url, or the portal web app's landing page (apps/portal-web,
 * /portal/auth/magic-link) with the token in the fragment. The bare page the API serves at
 * /portal/v1/auth/magic-link stays, for an installation that sets link_url to it.
 */
export function magicLinkUrl(config: Config, token: string): string {
  const template = config.portal_auth.link_url ?? `${publicBaseUrl(config)}/portal/auth/magic-link#token={token}`;
  return template.replaceAll('{token}', encodeURIComponent(token));
}

export type MagicLinkPurpose = 'sign_in' | 'confirm';

/** What a password registration's confirmation link carries: the chosen password and the registering browser. */
export interface RegistrationSecrets {
  passwordHash: string;
  /** SHA-256 of the value in the registering browser's cookie (registration-browser.ts). */
  browserHash: string;
}

/**
 * A new one-time token for this client (only its SHA-256 stored), mailed after the unit commits.
 * `confirm`: the mail of a password registration (spec 3.1 rule 2), carrying the hash of the
 * password chosen at registration, which only this link sets, only in the browser that
 * registered, and only if it is what confirms the email (confirm-client-email.ts); `sign_in`: a
 * requested link, which never sets a password.
 */
export async function issueMagicLink(
  uow: UnitOfWork,
  deps: Pick<DomainDeps, 'config' | 'clock'>,
  client: { id: string; email: string },
  purpose: MagicLinkPurpose,
  registration: RegistrationSecrets | null = null,
): Promise<void> {
  const token = randomToken(32);
  const now = deps.clock.now();
  const secrets = purpose === 'confirm' ? registration : null;
  await uow.db
    .insertInto('magic_link_tokens')
    .values({
      token_hash: sha256Hex(token),
      client_id: client.id,
      created_at: now,
      expires_at: new Date(now.getTime() + MAGIC_LINK_TTL_MS),
      used_at: null,
      password_hash: secrets?.passwordHash ?? null,
      browser_hash: secrets?.browserHash ?? null,
    })
    .execute();
  const url = magicLinkUrl(deps.config, token);
  const lasts = formatDuration(MAGIC_LINK_TTL_MS);
  queueMailAfterCommit(
    uow,
    purpose === 'confirm'
      ? {
          to: client.email,
          category: 'registration_confirmation',
          subject: 'Confirm your email',
          text: `Confirm your email address and sign in:\n\n${url}\n\nThe link works once, for ${lasts}. Open it in the browser you registered in and the password you chose there is yours; opened anywhere else it signs you in without a password, and you choose one in your account. If you did not register, ignore this mail: nothing is set, and the registration is deleted within a day.\n`,
        }
      : {
          to: client.email,
          category: 'magic_link',
          subject: 'Your sign-in link',
          text: `Sign in with this link:\n\n${url}\n\nThe link works once, for ${lasts}. If you did not ask for it, ignore this mail.\n`,
        },
  );
}

/**
 * POST /portal/v1/auth/magic-link (spec 5.7): the same answer whether or not the email exists,
 * and the same time: the budgets are spent before the answer (per address and per email+address
 * refuse with 429, so a stranger spends only their own), and everything that depends on whether
 * the email is known (the lookup, the token, the mail, the audit row) runs after it, in the
 * background (`background`, which the caller may await: tests, the CLI). bench:portal-magic-link
 * measures both answer times. A known client that could use a link (not rejected or disabled)
 * gets one; a pending one too (the link confirms the email). Mails per email silently stop past
 * their cap (a mailbox is not flooded; the answer is the same).
 */
export async function requestMagicLink(
  deps: DomainDeps,
  input: MagicLinkRequestInput,
  meta: RequestMeta,
): Promise<{ background: Promise<void> }> {
  const limits = deps.config.rate_limits.magic_link;
  const address = addressKey(meta.ip) ?? 'unknown';
  await enforceRateLimit(deps, 'magic_link', limits, { ip: meta.ip });
  await spendBudget(deps, `rl:magic_link:sub:client:${input.email}:ip:${address}`, limits.per_subject);
  const background = sendMagicLinkIfKnown(deps, input.email, meta).catch((err) =>
    deps.log.error({ err }, 'magic link not sent (the request was answered already)'),
  );
  return { background };
}

async function sendMagicLinkIfKnown(deps: DomainDeps, email: string, meta: RequestMeta): Promise<void> {
  const limits = deps.config.rate_limits.magic_link;
  const client = await deps.db.selectFrom('clients').select(['id', 'email', 'status']).where('email', '=', email).executeTakeFirst();
  const eligible = client !== undefined && client.status !== 'rejected' && client.status !== 'disabled';
  let sent = false;
  if (eligible) {
    const w = limits.mails_per_email;
    sent = (await deps.rateLimiter.hit(`rl:magic_link:mail:${email}`, w.limit, w.window_seconds * 1000, deps.clock.now().getTime()))
      .allowed;
  }
  await unitOfWork({ ...deps, actor: anonymous(meta.ip, meta.userAgent) }, async (uow) => {
    if (client && sent) await issueMagicLink(uow, deps, client, 'sign_in');
    uow.audit({
      action: 'auth.magic_link_requested',
      entity_type: client ? 'client' : null,
      entity_id: client?.id ?? null,
      details: {
        email,
        sent,
        ...(client ? {} : { reason: 'unknown_email' }),
        ...(client && !eligible ? { reason: `client_${client.status}` } : {}),
      },
    });
  });
}

type Redeemed =
  | { ok: TokenPair }
  | { invalid: string; clientId?: string }
  | { refused: { status: string; clientId: string; error: Error } };

/**
 * POST /portal/v1/auth/callback (spec 3.3, 5.7): a token that is known, unused and not expired
 * is used up (once, even when two callbacks race); its first use confirms the email
 * (confirmClientEmail: the password becomes the registration's if this is its confirmation
 * link redeemed in the browser that registered, else none); then, if the client may sign in (rule 1), the one session-issuing step,
 * which remembers the address as the client's. A confirmed email stays confirmed when sign-in
 * is refused (pending: waiting for approval).
 */
export async function redeemMagicLink(
  deps: DomainDeps,
  input: MagicLinkCallbackInput,
  meta: RequestMeta,
  /** The values the browser sent under the registration cookie (registrationBrowserCookie). */
  browserKeys: readonly string[] = [],
): Promise<TokenPair> {
  await enforceRateLimit(deps, 'magic_link', deps.config.rate_limits.magic_link, { ip: meta.ip });
  const hash = sha256Hex(input.token);
  const actor = anonymous(meta.ip, meta.userAgent);
  const outcome: Redeemed = await unitOfWork({ ...deps, actor }, async (uow) => {
    const trx = uow.db;
    const now = deps.clock.now();
    const row = await trx
      .selectFrom('magic_link_tokens as t')
      .innerJoin('clients as c', 'c.id', 't.client_id')
      .select(['t.client_id', 't.used_at', 't.expires_at', 't.password_hash', 't.browser_hash', 'c.status', 'c.email_verified_at'])
      .where('t.token_hash', '=', hash)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return { invalid: 'unknown' };
    if (row.used_at) return { invalid: 'used', clientId: row.client_id };
    if (row.expires_at <= now) return { invalid: 'expired', clientId: row.client_id };
    const used = await trx
      .updateTable('magic_link_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) return { invalid: 'used', clientId: row.client_id };
    // The registration's password only in the browser that registered (registration-browser.ts).
    const sameBrowser = row.password_hash !== null && browserMatches(row.browser_hash, browserKeys);
    const verifiedAt = await confirmClientEmail(uow, row.client_id, now, {
      method: 'magic_link',
      registrationPasswordHash: sameBrowser ? row.password_hash : null,
    });
    const client = { status: row.status, email_verified_at: verifiedAt };
    if (!clientMaySignIn(client)) return { refused: { status: row.status, clientId: row.client_id, error: clientSignInRefusal(client) } };
    await rememberClientAddress(trx, row.client_id, meta.ip, now);
    const pair = await issueSession(deps, trx, { type: 'client', id: row.client_id }, 'magic_link', meta);
    uow.audit(
      { action: 'auth.login', entity_type: 'client', entity_id: row.client_id, details: { surface: 'portal', method: 'magic_link' } },
      { type: 'client', id: row.client_id, ip: meta.ip ?? null },
    );
    return { ok: pair };
  });
  if ('ok' in outcome) return outcome.ok;
  const refused = 'refused' in outcome;
  await recordAudit(
    { ...deps, actor },
    {
      action: refused ? 'auth.login_refused' : 'auth.login_failed',
      entity_type: (refused ? outcome.refused.clientId : outcome.clientId) ? 'client' : null,
      entity_id: (refused ? outcome.refused.clientId : outcome.clientId) ?? null,
      details: {
        surface: 'portal',
        method: 'magic_link',
        reason: refused ? `client_${outcome.refused.status}` : `${outcome.invalid}_token`,
      },
    },
  );
  if (refused) throw outcome.refused.error;
  throw new UnauthenticatedError('this link is invalid, used or expired: ask for a new one');
}
