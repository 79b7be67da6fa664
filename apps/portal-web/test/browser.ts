import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '@svc/testkit';
import { screenshotsDir, shotInto } from '@svc/testkit/web-app-browser';
import type { Page } from 'playwright-core';

// The shared harness (packages/testkit web-app-browser.ts): Chromium, pages, axe; this app's screenshots.
export * from '@svc/testkit/web-app-browser';

export const SHOTS = screenshotsDir('portal-web');

export const shot = (page: Page, name: string): Promise<void> => shotInto(SHOTS, page, name);

/** The plain-text copy of the newest mail of `kind` to `email` in the outbox (<data_dir>/outbox), once the worker has written it. */
export async function mailTo(cp: ControlPlane, email: string, kind: string): Promise<string> {
  const outbox = join(cp.dataDir, 'outbox');
  for (let i = 0; i < 200; i++) {
    const names = (await readdir(outbox).catch(() => [] as string[])).filter((f) => f.includes(kind) && f.endsWith('.txt')).sort();
    for (const name of names.reverse()) {
      const text = await readFile(join(outbox, name), 'utf8');
      if (text.startsWith(`To: ${email}\n`)) return text;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${kind} mail to ${email} in ${outbox}`);
}

/** Fills the sign-in form's password tab and submits it (labels in the page's language; English by default). */
export async function signInWithPassword(
  page: Page,
  who: { email: string; password: string },
  labels = { email: 'Email', password: 'Password', submit: 'Sign in' },
): Promise<void> {
  await page.getByRole('textbox', { name: labels.email }).fill(who.email);
  await page.getByRole('textbox', { name: labels.password, exact: true }).fill(who.password);
  await page.getByRole('button', { name: labels.submit, exact: true }).click();
}
