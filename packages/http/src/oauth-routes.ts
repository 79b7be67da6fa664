import { type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  assertProviderConfigured,
  completeOAuth,
  type DomainDeps,
  type DomainError,
  isDomainError,
  listIdentities,
  OAuthCallbackQuery,
  oauthBrowserCookie,
  oauthReturnLocation,
  oauthReturnUrl,
  startOAuth,
  unlinkIdentity,
} from '@svc/domain';
import type { Context } from 'hono';
import type { RouteAuth } from './auth.ts';
import { cookieValues, setBindingCookie } from './binding-cookie.ts';
import { requestMeta } from './context.ts';
import type { AppEnv } from './env.ts';
import { defineRoute } from './route.ts';
import { json, TokenPairSchema } from './schemas.ts';
import { SessionModeQuery, setRefreshCookie, wantsCookieSession } from './session-cookie.ts';
import { publicPrefixOf } from './web-app.ts';

const ProviderParam = z.object({
  provider: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9_-]+$/)
    .openapi({ param: { name: 'provider', in: 'path' }, example: 'google' }),
});

export const OAuthIdentitySchema = z
  .object({
    provider: z.string(),
    email: z.string().nullable().openapi({ description: 'the email the provider gave when the identity was linked' }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
  })
  .openapi('OAuthIdentity');

const LinkStartedSchema = z.object({ authorization_url: z.string() }).openapi('OAuthLinkStarted');
const LinkedSchema = z.object({ linked: OAuthIdentitySchema }).openapi('OAuthLinked');
const IdentitiesSchema = z.object({ items: z.array(OAuthIdentitySchema) }).openapi('OAuthIdentities');

/**
 * Sets (or, with '', clears) the cookie binding an OAuth request to this browser; its
 * attributes are the domain's (browser-binding.ts).
 */
const bindingCookie = (c: Context<AppEnv>, surface: 'admin' | 'client', provider: string, value: string): void =>
  setBindingCookie(c, oauthBrowserCookie(c.get('deps').config, surface, provider), value);

/** Every value the browser sent under the binding cookie's name (a name set twice comes twice). */
const bindingKeys = (c: Context<AppEnv>, surface: 'admin' | 'client', provider: string): string[] =>
  cookieValues(c, oauthBrowserCookie(c.get('deps').config, surface, provider).name);

export interface OAuthRouteOptions {
  surface: 'admin' | 'client';
  /** Who may link, list and unlink (the surface's signed-in subjects). */
  auth: RouteAuth;
  tag: string;
  /**
   * The surface's web app on this origin ('/admin/'): a sign-in started with ?session=cookie
   * ends there, signed in through the refresh cookie (no token in any URL), or with
   * #oauth_error=<words> when refused.
   */
  webAppPath?: string;
}

/** Marks an OAuth request started by the web app (cookie session): same attributes as the binding cookie. */
const webModeCookie = (c: Context<AppEnv>, surface: 'admin' | 'client', provider: string) => {
  const binding = oauthBrowserCookie(c.get('deps').config, surface, provider);
  return { ...binding, name: `${binding.name}_web` };
};

/**
 * The OAuth routes of one surface (spec 4.3, 4.6, 5.6), paths relative to its base
 * (/api/v1 or /portal/v1): redirect and callback (no authentication), link from settings,
 * list and unlink identities. A provider not configured on the surface: 404 (spec 5.9 rule 1).
 */
export function registerOAuthRoutes(app: OpenAPIHono<AppEnv>, o: OAuthRouteOptions): void {
  const { surface } = o;
  // Before validation and authentication: an unconfigured provider's routes look absent.
  const gate = (deps: DomainDeps, c: Context) => assertProviderConfigured(deps.config, surface, c.req.param('provider') ?? '');

  const redirect = defineRoute({
    method: 'get',
    path: '/auth/oauth/{provider}/redirect',
    gate,
    tags: [o.tag],
    summary:
      "Redirect (302) to the provider's consent screen, setting the cookie that binds the sign-in to this browser (the callback requires it); 404 when the provider is not configured",
    auth: null,
    request: { params: ProviderParam, query: SessionModeQuery },
    responses: {
      302: {
        description:
          'To the provider (Location); Set-Cookie binds the request to this browser (HttpOnly, SameSite=Lax, the callback path only). With ?session=cookie (the web app): the callback ends at the web app, signed in through the refresh cookie',
      },
      404: { description: 'Provider not configured' },
      503: { description: 'The provider cannot be reached' },
      504: { description: 'The provider did not answer in time' },
    },
  });
  app.openapi(redirect, (async (c: any) => {
    const { provider } = c.req.valid('param');
    const started = await startOAuth(c.get('deps'), surface, provider, requestMeta(c));
    bindingCookie(c, surface, provider, started.browserKey);
    if (o.webAppPath && wantsCookieSession(c)) setBindingCookie(c, webModeCookie(c, surface, provider), '1');
    return c.redirect(started.url.toString(), 302);
  }) as never);

  const callback = defineRoute({
    method: 'get',
    path: '/auth/oauth/{provider}/callback',
    gate,
    tags: [o.tag],
    summary:
      'Complete OAuth in the browser that started it (its binding cookie is required, then cleared): sign in (token pair), register (portal, by registration mode) or link (started from settings; only while that session is live, and for it when a token is shown). With oauth_return_url configured: 302 there with the answer in the URL fragment',
    auth: null,
    request: { params: ProviderParam, query: OAuthCallbackQuery },
    responses: {
      200: json(z.union([TokenPairSchema, LinkedSchema]), 'Token pair (sign-in) or the linked identity (from settings)'),
      302: { description: 'To oauth_return_url, the answer in the fragment' },
      401: {
        description:
          "State unknown, used, expired or of the other surface; another browser (no binding cookie, or another browser's); the linking session ended; the provider refused; its answer failed validation",
      },
      403: {
        description:
          "Sign-in refused (reason): unverified email for an automatic link, no such admin, registration closed, pending approval; a link completed with another session's token",
      },
      404: { description: 'Provider not configured' },
      409: { description: 'Identity linked to someone else' },
      503: { description: 'The provider cannot be reached' },
      504: { description: 'The provider did not answer in time' },
    },
  });
  app.openapi(callback, (async (c: any) => {
    const { provider } = c.req.valid('param');
    const deps = c.get('deps');
    const returnUrl = oauthReturnUrl(deps.config, surface);
    const browser = { keys: bindingKeys(c, surface, provider), authorization: c.req.header('authorization') };
    const webMode = o.webAppPath !== undefined && cookieValues(c, webModeCookie(c, surface, provider).name).includes('1');
    // Whatever the outcome: the request it bound is spent.
    bindingCookie(c, surface, provider, '');
    if (webMode) {
      setBindingCookie(c, webModeCookie(c, surface, provider), '');
      // The web app on this origin: signed in through its refresh cookie, or told why not (fragment: never sent to a server).
      const app = `${publicPrefixOf(deps.config.http.public_base_url)}${o.webAppPath}`;
      try {
        const outcome = await completeOAuth(deps, surface, provider, c.req.valid('query'), requestMeta(c), browser);
        if (outcome.kind === 'session') setRefreshCookie(c, surface === 'admin' ? 'admin' : 'client', outcome.pair.refresh_token);
        return c.redirect(outcome.kind === 'session' ? app : `${app}#oauth=linked`, 302);
      } catch (err) {
        if (isDomainError(err)) return c.redirect(`${app}#oauth_error=${encodeURIComponent((err as DomainError).message)}`, 302);
        throw err;
      }
    }
    try {
      const outcome = await completeOAuth(deps, surface, provider, c.req.valid('query'), requestMeta(c), browser);
      if (returnUrl) return c.redirect(oauthReturnLocation(returnUrl, { ok: outcome }), 302);
      return outcome.kind === 'session' ? c.json(outcome.pair, 200) : c.json({ linked: outcome.identity }, 200);
    } catch (err) {
      if (returnUrl && isDomainError(err)) return c.redirect(oauthReturnLocation(returnUrl, { error: err as DomainError }), 302);
      throw err;
    }
  }) as never);

  const link = defineRoute({
    method: 'post',
    path: '/auth/oauth/{provider}/link',
    gate,
    tags: [o.tag],
    summary: "Link a provider to the signed-in account (settings): answers the provider's URL; its callback links the identity",
    auth: o.auth,
    request: { params: ProviderParam, query: SessionModeQuery },
    responses: {
      200: json(
        LinkStartedSchema,
        "Open authorization_url in this browser: Set-Cookie binds the link to it. With ?session=cookie (the web app): the callback ends at the web app, '#oauth=linked' (or '#oauth_error=…') in the fragment",
      ),
      404: { description: 'Provider not configured' },
      503: { description: 'The provider cannot be reached' },
      504: { description: 'The provider did not answer in time' },
    },
  });
  app.openapi(link, (async (c: any) => {
    const { provider } = c.req.valid('param');
    const { sub, sid } = c.get('auth');
    const started = await startOAuth(c.get('deps'), surface, provider, requestMeta(c), { subjectId: sub, sessionId: sid });
    bindingCookie(c, surface, provider, started.browserKey);
    if (o.webAppPath && wantsCookieSession(c)) setBindingCookie(c, webModeCookie(c, surface, provider), '1');
    return c.json({ authorization_url: started.url.toString() }, 200);
  }) as never);

  const list = defineRoute({
    method: 'get',
    path: '/auth/identities',
    tags: [o.tag],
    summary: 'OAuth identities linked to the signed-in account',
    auth: o.auth,
    responses: { 200: json(IdentitiesSchema, 'Linked identities') },
  });
  app.openapi(list, (async (c: any) => c.json({ items: await listIdentities(c.get('deps'), surface, c.get('auth').sub) }, 200)) as never);

  const unlink = defineRoute({
    method: 'delete',
    path: '/auth/identities/{provider}',
    tags: [o.tag],
    summary: "Unlink a provider from the signed-in account (an admin's last way to sign in is kept: 409)",
    auth: o.auth,
    request: { params: ProviderParam },
    responses: {
      204: { description: 'Unlinked' },
      404: { description: 'No identity of this provider' },
      409: { description: 'It is the last way to sign in' },
    },
  });
  app.openapi(unlink, (async (c: any) => {
    await unlinkIdentity(c.get('deps'), surface, c.get('auth').sub, c.req.valid('param').provider, requestMeta(c));
    return c.body(null, 204);
  }) as never);
}
