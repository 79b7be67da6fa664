import { z } from 'zod';

/** Signing in on both surfaces: passwords, OAuth providers, tokens and the budgets that bound attempts. */

const oauthProvider = z.object({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  issuer: z.url().optional(),
  authorization_endpoint: z.url().optional(),
  token_endpoint: z.url().optional(),
  userinfo_endpoint: z.url().optional(),
  scopes: z.array(z.string()).optional(),
});
export type OAuthProviderConfig = z.infer<typeof oauthProvider>;

const window = z.object({
  limit: z.number().int().positive(),
  window_seconds: z.number().int().positive(),
});
export type RateLimitWindow = z.infer<typeof window>;

const perIpAndSubject = (ip: RateLimitWindow, subject: RateLimitWindow) =>
  z.object({ per_ip: window.default(ip), per_subject: window.default(subject) }).prefault({});

/** Admins' sign-in (the admin API). */
export const authSection = z
  .object({
    password_login: z.boolean().default(true),
    oauth: z.record(z.string().regex(/^[a-z0-9_-]+$/), oauthProvider).prefault({}),
    /**
     * Optional: where the OAuth callback sends the browser after sign-in (302), with the
     * token pair (or the error) in the URL fragment. Without it the callback answers JSON.
     */
    oauth_return_url: z.url().optional(),
    access_token_ttl_seconds: z
      .number()
      .int()
      .positive()
      .default(15 * 60),
    refresh_token_ttl_seconds: z
      .number()
      .int()
      .positive()
      .default(30 * 24 * 3600),
  })
  .prefault({});

/** Customers' sign-in and registration (the portal API). */
export const portalAuthSection = z
  .object({
    registration: z.enum(['closed', 'application', 'open']).default('closed'),
    password_login: z.boolean().default(true),
    oauth: z.record(z.string().regex(/^[a-z0-9_-]+$/), oauthProvider).prefault({}),
    /** As auth.oauth_return_url, for the portal's OAuth callback. */
    oauth_return_url: z.url().optional(),
    /**
     * Where a magic link points: `{token}` is replaced by the one-time token. Default: the
     * portal web app's page {public_base_url}/portal/auth/magic-link#token={token} (the API's bare
     * page /portal/v1/auth/magic-link#token={token} does the same without the app), which signs
     * in only when the person presses its button (a mail scanner that opens links does not use
     * the token up; in the fragment it never reaches a server log). A front end of the
     * operator's posts the token to POST /portal/v1/auth/callback itself.
     */
    link_url: z
      .string()
      .url()
      .refine((u) => u.includes('{token}'), 'must contain {token}')
      .optional(),
  })
  .prefault({});

/** Argon2id parameters of every stored password, and how many hashes run at once. */
export const passwordHashSection = z
  .object({
    // OWASP's Argon2id minimum: m=19 MiB, t=2, p=1. Lower values are refused.
    memory_kib: z
      .number()
      .int()
      .min(19 * 1024)
      .default(19 * 1024),
    iterations: z.number().int().min(2).default(2),
    parallelism: z.number().int().min(1).default(1),
    /** Hashes computed at once; the rest queue. Default: cores - 1 (min 1), so a login flood never takes the event loop's core. */
    concurrency: z.number().int().positive().optional(),
    /** Hash requests allowed to wait; beyond that sign-in answers 503 at once instead of piling up. */
    max_queue: z.number().int().positive().default(256),
  })
  .prefault({});

/** Attempts allowed per window, per surface (docs/architecture.md, "Sign-in budgets"). */
export const rateLimitsSection = z
  .object({
    /**
     * Password sign-in on both surfaces, each with its own counters (docs/architecture.md,
     * "Sign-in budgets"; docs/portal.md): per_ip counts every attempt of an address, whatever
     * the account; per_subject counts attempts per account *and* address, so a stranger spends
     * only their own budget; per_account counts attempts on an account from addresses that
     * never signed in to it (a many-address guesser), which addresses the account signed in
     * from before do not spend and are not refused by (a customer's: by password or magic link).
     */
    login: z
      .object({
        per_ip: window.default({ limit: 20, window_seconds: 60 }),
        per_subject: window.default({ limit: 10, window_seconds: 900 }),
        per_account: window.default({ limit: 100, window_seconds: 900 }),
      })
      .prefault({}),
    refresh: perIpAndSubject({ limit: 60, window_seconds: 60 }, { limit: 30, window_seconds: 60 }),
    setup: perIpAndSubject({ limit: 10, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
    /** Enroll over gRPC, per agent IP and per token. */
    enroll: perIpAndSubject({ limit: 30, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
    /**
     * OAuth on both surfaces: the redirect and the callback per address; linking from
     * settings also per signed-in subject.
     */
    oauth: perIpAndSubject({ limit: 30, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
    /**
     * POST /portal/v1/auth/magic-link and /auth/callback (one budget per address for both:
     * a sign-in spends two; many customers may share one address behind a carrier NAT); the
     * link request also per email *and* address (refused with
     * 429, so a stranger spends only their own budget). `mails_per_email` bounds the mails one
     * address book entry receives from everyone together: past it the answer stays the same
     * and no mail is sent (a mailbox is not flooded; nobody is refused a sign-in for it, the
     * link already sent still works).
     */
    magic_link: z
      .object({
        per_ip: window.default({ limit: 30, window_seconds: 60 }),
        per_subject: window.default({ limit: 5, window_seconds: 900 }),
        mails_per_email: window.default({ limit: 10, window_seconds: 3600 }),
      })
      .prefault({}),
    /** POST /portal/v1/auth/register, per address and per email. */
    register: perIpAndSubject({ limit: 10, window_seconds: 3600 }, { limit: 5, window_seconds: 3600 }),
    /** POST /portal/v1/checkout: new checkouts per client (a replay with its key is not counted). */
    checkout: window.default({ limit: 20, window_seconds: 3600 }),
    /** Requests per API token (docs/integrations.md): an integration that loops is slowed, not the panel. */
    api_token: window.default({ limit: 600, window_seconds: 60 }),
  })
  .prefault({});
