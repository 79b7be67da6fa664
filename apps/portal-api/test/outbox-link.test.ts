import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ControlPlane, startControlPlane } from '@svc/testkit';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The dev outbox as a person uses it (issue 28.7): `svc start` as a real process with no SMTP,
 * a customer asks for a sign-in link, and whoever tries the system opens `<data_dir>/outbox`,
 * copies the first link of the plain-text copy and follows it. The .eml beside it is
 * quoted-printable, where a long link is broken over lines and its `=` written `=3D`.
 */
let cp: ControlPlane | undefined;
afterAll(async () => {
  await cp?.stop();
});

const parseLine = (l: string): Record<string, any> | null => {
  try {
    return JSON.parse(l);
  } catch {
    return null;
  }
};

async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen`);
}

describe('the outbox copy of a mail', () => {
  it('holds a working link: the first URL of the .txt of a magic-link mail, taken whole, signs the customer in', async () => {
    cp = await startControlPlane({ env: { SVC_MAIL_OUTBOX: 'true' } });
    const email = 'reader@example.com';
    expect((await cp.api.post('/api/v1/clients', { email })).status).toBe(201);
    const asked = await fetch(`${cp.http}/portal/v1/auth/magic-link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(asked.status).toBeLessThan(300);

    const outbox = join(cp.dataDir, 'outbox');
    const name = await eventually(
      async () => (await readdir(outbox).catch(() => [] as string[])).find((f) => f.includes('-magic_link-') && f.endsWith('.txt')),
      'the plain-text copy of the sign-in mail',
    );
    const copy = await readFile(join(outbox, name), 'utf8');
    const [head = '', body = ''] = copy.split('\n\n', 2);
    expect(head.split('\n')).toEqual([
      `To: ${email}`,
      'Subject: Your sign-in link',
      expect.stringMatching(/^Date: \w{3}, \d{2} \w{3} \d{4} /),
    ]);
    expect(body).toMatch(/^Sign in with this link:/);

    // As a person copies it: the first URL in the file, up to the first blank.
    const link = new URL(/https?:\/\/\S+/.exec(copy)?.[0] ?? 'missing:');
    // The portal web app's landing page (the default link, issue 32).
    expect(`${link.origin}${link.pathname}`).toBe(`${cp.http}/portal/auth/magic-link`);
    expect(link.href.length).toBeGreaterThan(76);
    // The page the link opens, then what its script does with the token in the fragment.
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const token = new URLSearchParams(link.hash.slice(1)).get('token');
    const signIn = await fetch(`${cp.http}/portal/v1/auth/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(signIn.status).toBe(200);
    const { access_token } = (await signIn.json()) as { access_token: string };
    const me = await fetch(`${cp.http}/portal/v1/me`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(((await me.json()) as { client: { email: string } }).client.email).toBe(email);

    // The log still carries the link, whole, and names the copy.
    const logged = cp.process.lines.map(parseLine).find((l) => l?.mail?.text_file?.endsWith(name));
    expect(logged?.msg).toContain(link.href);
  });
});
