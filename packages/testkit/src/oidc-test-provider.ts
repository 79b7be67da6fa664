/// <reference path="./oidc-provider.d.ts" />
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestAccount {
  email: string | null;
  email_verified: boolean;
}

export interface OidcTestProvider {
  /** The issuer (http://127.0.0.1:port), for SVC_*_OAUTH_<NAME>_ISSUER. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The accounts the provider knows, by subject (provider user id); tests add and change them. */
  accounts: Map<string, TestAccount>;
  /**
   * Walks an authorization URL as a browser would: follows the provider's redirects, signs
   * `subject` in at the login prompt and grants the consent, and stops at the redirect to a
   * URL starting with `stopAt` (the relying party's callback), which it returns.
   */
  authorize(authorizationUrl: string, subject: string, stopAt: string): Promise<URL>;
  /** The account the next login prompt signs in, for a real browser walking the provider's pages itself. */
  signInNextAs(subject: string): void;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider) on 127.0.0.1 for tests: one confidential client with
 * the given redirect URIs, PKCE required, accounts under the test's control (email and
 * email_verified), and a minimal interaction handler that logs in the chosen account.
 */
export async function startOidcTestProvider(opts: { redirectUris: string[] }): Promise<OidcTestProvider> {
  const accounts = new Map<string, TestAccount>();
  const clientId = 'svc-test-client';
  const clientSecret = 'svc-test-secret-0123456789abcdef';
  let nextSubject = '';
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['svc-test-cookie-key'] },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, ...(account.email !== null ? { email: account.email, email_verified: account.email_verified } : {}) }),
      };
    },
  });
  const handle = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: nextSubject } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/')) {
      interaction(req, res).catch((err: Error) => {
        res.statusCode = 500;
        res.end(String(err.message));
      });
      return;
    }
    handle(req, res);
  });

  async function authorize(authorizationUrl: string, subject: string, stopAt: string): Promise<URL> {
    nextSubject = subject;
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    for (let hop = 0; hop < 20; hop++) {
      if (url.startsWith(stopAt)) return new URL(url);
      const res = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair = ''] = c.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        if (/expires=Thu, 01 Jan 1970/i.test(c) || value === '') jar.delete(name);
        else jar.set(name, value);
      }
      const location = res.headers.get('location');
      await res.body?.cancel();
      if (!location) throw new Error(`the provider stopped at ${url}: HTTP ${res.status}`);
      url = new URL(location, url).toString();
    }
    throw new Error('too many redirects at the provider');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    authorize,
    signInNextAs: (subject) => {
      nextSubject = subject;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
