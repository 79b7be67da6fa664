import {
  type DomainDeps,
  isDomainError,
  loginClientWithPassword,
  MagicLinkCallbackInput,
  MagicLinkRequestInput,
  PasswordLoginInput,
  type PortalCtx,
  parseInput,
  RegisterInput,
  redeemMagicLink,
  registerWithPassword,
  requestMagicLink,
  SetPasswordInput,
  setClientPassword,
  type TokenPair,
  withActor,
} from '@svc/domain';
import { until } from '@svc/testkit';
import { type MailTestbed, mailTestbed } from '../support.ts';

/**
 * The portal's sign-in verbs as a customer (or a stranger) calls them, each from an address, over
 * a testbed whose mails are kept: the link a mail carries is what the person would click.
 */
export interface PortalBed extends MailTestbed {
  /** The deps the verbs run with (the testbed's unless `deps` was given). */
  deps(): DomainDeps;
  /** A registration, with the value the registering browser keeps in its cookie. */
  register(email: string, password: string, ip?: string): Promise<{ id: string; browserKey: string }>;
  /** The token of the newest mail of `category` to `email` (waits for one newer than `after` mails). */
  tokenOf(email: string, category: 'registration_confirmation' | 'magic_link', after?: number): Promise<string>;
  /** Asks for a sign-in link and answers its token. */
  requestLink(email: string, ip?: string): Promise<string>;
  /** Redeems a link; `browserKeys`: what the browser sends under the registration cookie. */
  redeem(token: string, ip?: string, browserKeys?: readonly string[]): Promise<TokenPair>;
  login(email: string, password: string, ip?: string): Promise<TokenPair>;
  /** The client's context behind a token pair (its session id too), as a portal route builds it. */
  asClient(pair: TokenPair, ip?: string): Promise<{ ctx: PortalCtx; sid: string }>;
  setPassword(pair: TokenPair, input: { password: string; current_password?: string }, ip?: string): Promise<void>;
}

export const ME = '192.0.2.10';

export function portalBed(env: Record<string, string>, withDeps?: (deps: DomainDeps) => DomainDeps): PortalBed {
  const t = mailTestbed({ SVC_SMTP_URL: 'smtp://127.0.0.1:1', ...env });
  const deps = () => (withDeps ? withDeps(t.bed.deps) : t.bed.deps);
  const tokenOf = async (email: string, category: string, after = 0) => {
    const mine = () => t.mails.filter((m) => m.to === email && m.category === category);
    await until(`a ${category} mail to ${email}`, () => mine().length > after);
    const text = mine().at(-1)?.text ?? '';
    return decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(text)?.[1] ?? '');
  };
  const bed: PortalBed = {
    get bed() {
      return t.bed;
    },
    mails: t.mails,
    mailTo: t.mailTo,
    deps,
    register: async (email, password, ip = ME) => {
      const { answer, browserKey } = await registerWithPassword(deps(), parseInput(RegisterInput, { email, password }), { ip });
      return { ...answer, browserKey };
    },
    tokenOf,
    async requestLink(email, ip = ME) {
      const before = t.mails.filter((m) => m.to === email && m.category === 'magic_link').length;
      await (await requestMagicLink(deps(), parseInput(MagicLinkRequestInput, { email }), { ip })).background;
      return tokenOf(email, 'magic_link', before);
    },
    redeem: (token, ip = ME, browserKeys = []) =>
      redeemMagicLink(deps(), parseInput(MagicLinkCallbackInput, { token }), { ip }, browserKeys),
    login: (email, password, ip = ME) => loginClientWithPassword(deps(), parseInput(PasswordLoginInput, { email, password }), { ip }),
    async asClient(pair, ip = ME) {
      // Read, not verified: tests move the clock, and the route checked the token already.
      const claims = JSON.parse(Buffer.from(pair.access_token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string; sid: string };
      const ctx = withActor(deps(), { type: 'client', id: claims.sub, ip }) as PortalCtx;
      return { ctx, sid: claims.sid };
    },
    async setPassword(pair, input, ip = ME) {
      const { ctx, sid } = await bed.asClient(pair, ip);
      await setClientPassword(ctx, sid, parseInput(SetPasswordInput, input));
    },
  };
  return bed;
}

/** `ok`, or the type of the domain error a call failed with (other errors fail the test). */
export const outcome = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: unknown) => {
      if (isDomainError(err)) return err.type;
      throw err;
    },
  );
