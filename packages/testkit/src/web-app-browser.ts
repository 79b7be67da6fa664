import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { chromiumPath } from './headless-browser.ts';

/**
 * The web apps' browser tests (apps/admin-web, apps/portal-web): Debian's Chromium driven by playwright-core (Playwright's own browser download does not work
 * here), with the flags a sandboxed CI needs: no sandbox (root), no GPU, and nothing that
 * dials hosts this machine cannot reach. Null where no Chromium is installed.
 */
export const CHROMIUM = chromiumPath();

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM as string,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface PageOptions {
  width?: number;
  height?: number;
  locale?: string;
  colorScheme?: 'light' | 'dark';
  /** The browser's User-Agent (an iPhone's: the portal offers the iOS apps). */
  userAgent?: string;
}

/** A fresh profile (no cookies, no storage) with the page's console errors collected. */
export async function openPage(
  browser: Browser,
  opts: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
    locale: opts.locale ?? 'en-US',
    colorScheme: opts.colorScheme ?? 'light',
    // Screens are checked and photographed at rest, not mid-transition.
    reducedMotion: 'reduce',
    ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    // A refused request (a 401 before sign-in, a 409 the test provokes) is logged by the browser; the rest are the app's.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  return { context, page, errors };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * axe-core on the page as it is (injected through the DevTools protocol, which the page's CSP
 * does not govern): the violations of serious or critical impact, WCAG 2.1 A and AA.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${axeSource}\n;0`);
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })`,
  )) as {
    violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
}

/** Where a web app's screenshots go (a person looks at them): SVC_SCREENSHOTS_DIR, else a temporary directory named after the app. */
export function screenshotsDir(app: string): string {
  const dir = process.env.SVC_SCREENSHOTS_DIR ?? join(tmpdir(), `svc-${app}-shots`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Every serious or critical axe violation of the screen, named: none expected. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  const violations = await seriousViolations(page);
  if (violations.length > 0) throw new Error(`${screen}: ${JSON.stringify(violations, null, 2)}`);
}

/** A full-page screenshot `<dir>/<name>.png`. */
export async function shotInto(dir: string, page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
