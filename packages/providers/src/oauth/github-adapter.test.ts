import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { githubAdapter } from './github-adapter.ts';

// The GitHub adapter's profile mapping (spec 2.2 OAuth profile) against a small fake of
// GitHub's token endpoint and API on 127.0.0.1: the id from /user, the email and
// email_verified from the primary entry of /user/emails.
let server: Server;
let base: string;
let emails: unknown = [];
const tokenForms: Array<Record<string, string>> = [];

const body = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (c) => {
      s += c;
    });
    req.on('end', () => resolve(s));
  });

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'POST' && req.url === '/login/oauth/access_token') {
      tokenForms.push(Object.fromEntries(new URLSearchParams(await body(req))));
      return send(200, { access_token: 'gho_test', token_type: 'bearer', scope: 'read:user,user:email' });
    }
    if (req.headers.authorization !== 'Bearer gho_test') return send(401, { message: 'Bad credentials' });
    if (req.url === '/hang/user') return; // never answers
    if (req.url === '/api/user') return send(200, { id: 4242, login: 'octo', email: 'public@example.com' });
    if (req.url === '/api/user/emails') return send(200, emails);
    return send(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const adapter = (userinfo = `${base}/api/user`, timeoutSeconds?: number) =>
  githubAdapter({
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    name: 'github',
    clientId: 'gh-client',
    clientSecret: 'gh-secret',
    authorizationEndpoint: `${base}/login/oauth/authorize`,
    tokenEndpoint: `${base}/login/oauth/access_token`,
    userinfoEndpoint: userinfo,
    // The adapter's own logic under test: the outbound client (the runtime's) is proven elsewhere.
    fetch: globalThis.fetch,
  });

async function exchange(a = adapter()) {
  const redirectUri = 'https://panel.example.test/api/v1/auth/oauth/github/callback';
  const callbackUrl = new URL(`${redirectUri}?code=the-code&state=the-state`);
  return a.exchange({ callbackUrl, state: 'the-state', codeVerifier: 'v'.repeat(43), nonce: 'n', redirectUri });
}

describe('GitHub adapter', () => {
  it('asks for the user and email scopes with a PKCE S256 challenge', async () => {
    const url = await adapter().authorizationUrl({ state: 's', codeChallenge: 'c', nonce: 'n', redirectUri: 'https://x.example/cb' });
    expect(url.origin + url.pathname).toBe(`${base}/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'gh-client',
      scope: 'read:user user:email',
      state: 's',
      code_challenge: 'c',
      code_challenge_method: 'S256',
      redirect_uri: 'https://x.example/cb',
    });
  });

  it('maps the verified primary email: provider_user_id from /user, email lowercased, email_verified true; sends the PKCE verifier', async () => {
    emails = [
      { email: 'old@example.com', primary: false, verified: true },
      { email: 'Octo@Example.com', primary: true, verified: true },
    ];
    expect(await exchange()).toEqual({ provider_user_id: '4242', email: 'octo@example.com', email_verified: true });
    expect(tokenForms.at(-1)).toMatchObject({ grant_type: 'authorization_code', code: 'the-code', code_verifier: 'v'.repeat(43) });
  });

  it('an unverified primary email is not verified, even when another address is', async () => {
    emails = [
      { email: 'octo@example.com', primary: true, verified: false },
      { email: 'other@example.com', primary: false, verified: true },
    ];
    expect(await exchange()).toEqual({ provider_user_id: '4242', email: 'octo@example.com', email_verified: false });
  });

  it('no primary email (or a malformed list): no email, not verified', async () => {
    emails = { message: 'unexpected' };
    expect(await exchange()).toEqual({ provider_user_id: '4242', email: null, email_verified: false });
  });

  it('a verified primary email the Email rule refuses (markup, a bcc line, a list, a space, the Kelvin sign) is no email, not verified', async () => {
    for (const email of [
      '<b>octo</b>@example.com',
      'octo@example.com\r\nbcc: everyone@example.com',
      'octo@example.com, carol@example.com',
      'octo cat@example.com',
      '\u212Aarol@example.com',
    ]) {
      emails = [{ email, primary: true, verified: true }];
      expect(await exchange(), JSON.stringify(email)).toEqual({ provider_user_id: '4242', email: null, email_verified: false });
    }
  });

  it('the API does not answer: a timeout problem (504) once the time limit of the call passes', async () => {
    await expect(exchange(adapter(`${base}/hang/user`, 1))).rejects.toMatchObject({ name: 'DomainError', type: 'timeout' });
  });

  it('the API not reachable: an unavailable problem, not a crash', async () => {
    await expect(exchange(adapter('http://127.0.0.1:1/api/user'))).rejects.toMatchObject({ name: 'DomainError', type: 'unavailable' });
  });
});
