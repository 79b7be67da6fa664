import { screenshotsDir, shotInto } from '@svc/testkit/web-app-browser';
import type { Page } from 'playwright-core';

// The shared harness (packages/testkit web-app-browser.ts): Chromium, pages, axe; this app's screenshots.
export * from '@svc/testkit/web-app-browser';

export const SHOTS = screenshotsDir('admin-web');

export const shot = (page: Page, name: string): Promise<void> => shotInto(SHOTS, page, name);
