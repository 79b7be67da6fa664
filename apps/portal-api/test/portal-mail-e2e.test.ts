import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type ControlPlane, cookiesOf, startControlPlane } from '@svc/testkit';
import { type SmtpReceiver, startSmtpReceiver } from '@svc/testkit/smtp-receiver';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The portal as a person meets it, with `svc start` as a real process: register, receive the
 * confirmation mail (a real SMTP receiver; or, on a fresh machine without SMTP, the outbox
 * folder), open the link, sign in, read one's account. In mode application the owner is
 * mailed about the registration (client.registered) and approves it in the admin API.
 */
const PASSWORD = 'a long customer password';
const started: ControlPlane[] = [];
let smtp: SmtpReceiver | undefined;
afterAll(async () => {
  for (const cp of started) await cp.stop();
  await smtp?.close();
});

const linkIn = (text: string): URL => {
  const m = /https?:\/\/\S+/.exec(text);
  if (!m) throw new Error(`no link in ${text}`);
  return new URL(m[0]);
};
const tokenOf = (url: URL) => new URLSearchParams(url.hash.slice(1)).get('token') ?? '';

async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen`);
}

describe('the portal over SMTP (svc start, mode application)', () => {
  it('register -> confirmation mail -> the link confirms -> the owner is mailed -> approve -> sign in with password -> me', async () => {
    smtp = await startSmtpReceiver();
    const cp = await startControlPlane({
      env: { SVC_SMTP_URL: smtp.url, SVC_PORTAL_REGISTRATION: 'application', SVC_MAIL_FROM: 'shop <shop@example.com>' },
    });
    started.push(cp);
    const email = 'applicant@example.com';
    const reg = await fetch(`${cp.http}/portal/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(reg.status).toBe(201);
    const confirmation = await eventually(async () => smtp?.mails.find((m) => m.to.includes(email)), 'the confirmation mail');
    expect(confirmation.headers.subject).toBe('Confirm your email');
    expect(confirmation.headers.from).toContain('shop@example.com');
    const link = linkIn(confirmation.text);
    // The portal web app's landing page (the default link, issue 32).
    expect(`${link.origin}${link.pathname}`).toBe(`${cp.http}/portal/auth/magic-link`);
    expect((await fetch(link)).status).toBe(200);

    // The browser that registered: its registration cookie goes back with the link's callback.
    const callback = (token: string) =>
      fetch(`${cp.http}/portal/v1/auth/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: cookiesOf(reg) },
        body: JSON.stringify({ token }),
      });
    const waiting = await callback(tokenOf(link));
    expect(waiting.status).toBe(403);
    expect(((await waiting.json()) as { detail: string }).detail).toContain('approval');

    // The owner learns of the application by mail (event client.registered), without polling.
    const owner = (await cp.api.get('/api/v1/auth/me')).body.email as string;
    const notice = await eventually(async () => smtp?.mails.find((m) => m.to.includes(owner)), 'the owner’s mail');
    expect(notice.text).toContain(email);
    const client = (await cp.api.get(`/api/v1/clients?email=${encodeURIComponent(email)}`)).body.items[0];
    expect(notice.text).toContain(client.id);
    expect((await cp.api.post(`/api/v1/clients/${client.id}/approve`, undefined)).status).toBe(200);

    const login = await fetch(`${cp.http}/portal/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const pair = (await login.json()) as { access_token: string };
    const me = await fetch(`${cp.http}/portal/v1/me`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { client: { email: string; status: string } }).client).toMatchObject({ email, status: 'active' });
  });
});

describe('the portal on a fresh machine without SMTP (svc start, mode open): the outbox', () => {
  it('the confirmation mail is an .eml file in <data_dir>/outbox (0600) and in the log; its link signs in; an open-mode registration mails the owner', async () => {
    const cp = await startControlPlane({ env: { SVC_PORTAL_REGISTRATION: 'open', SVC_MAIL_OUTBOX: 'true' } });
    started.push(cp);
    const email = 'newcomer@example.com';
    const reg = await fetch(`${cp.http}/portal/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(reg.status).toBe(201);
    const outbox = join(cp.dataDir, 'outbox');
    const file = await eventually(
      async () => (await readdir(outbox).catch(() => [] as string[])).find((f) => f.endsWith('.eml')),
      'the .eml file',
    );
    expect(file).toContain('registration_confirmation');
    expect((await stat(join(outbox, file))).mode & 0o777).toBe(0o600);
    const eml = await readFile(join(outbox, file), 'utf8');
    expect(eml).toContain(`To: ${email}`);
    const url = linkIn(eml.replace(/=\r?\n/g, '').replace(/=3D/g, '='));
    const logged = await eventually(async () => cp.process.lines.find((l) => l.includes(tokenOf(url))), 'the mail in the log');
    expect(logged).toContain(email);
    const signIn = await fetch(`${cp.http}/portal/v1/auth/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokenOf(url) }),
    });
    expect(signIn.status).toBe(200);

    // Owners are told of open-mode registrations too (client.registered, mode open), in words that fit.
    const owner = (await cp.api.get('/api/v1/auth/me')).body.email as string;
    const notice = await eventually(async () => {
      for (const f of await readdir(outbox)) {
        if (!f.includes('event_client.registered')) continue;
        const text = await readFile(join(outbox, f), 'utf8');
        if (text.includes(`To: ${owner}`)) return text.replace(/=\r?\n/g, '');
      }
      return undefined;
    }, 'the owner’s mail in the outbox');
    expect(notice).toContain(`Subject: New customer registered: ${email}`);
    expect(notice).toContain('registration is open');
    expect(notice).not.toContain('/approve');
  });
});
