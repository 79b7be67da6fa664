import { randomUUID } from 'node:crypto';
import { ingestUsageReport } from '@svc/domain';
import { formatBytes, formatDateTimeUtc } from '@svc/format';
import { until } from '@svc/testkit';
import { chromiumPath, type HeadlessBrowser, startHeadlessBrowser } from '@svc/testkit/headless-browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BillingServer, checkout, customer, manualProvider, nodeWithGroup, plan, startBilling } from './billing-harness.ts';

// Issue 28 item 9: one 50 GiB plan read "50.0 GiB" on the /sub page, "53.69 GB" on the portal
// page and "in 29 days" right after buying 30. One subscription, bought now through a manual
// payment an admin confirms, with some traffic: the /sub page, the portal page (run by a real
// browser) and the receipt say the same sizes and times, and they are the formatter's reading
// of the very numbers the subscription-userinfo header gives apps.
const GiB = 2 ** 30;
const MiB = 2 ** 20;
const UP = 300 * MiB;
const DOWN = 1229 * MiB;

let b: BillingServer;
let buyer: { id: string; email: string; token: string };
let subPath: string;

beforeAll(async () => {
  b = await startBilling();
  const fleet = await nodeWithGroup(b);
  const fifty = await plan(b, { duration_days: 30, traffic_limit_bytes: 50 * GiB, access_group_ids: [fleet.groupId] });
  const manual = await manualProvider(b);
  buyer = await customer(b);
  const started = await checkout(b, buyer.token, randomUUID(), { plan_id: fifty.id, provider_id: manual.id });
  expect(started.status, started.text).toBe(201);
  const confirmed = await b.p.s.api.post(`/api/v1/payments/${started.body.payment_id}/confirm`, undefined, { token: b.p.token });
  expect(confirmed.status, confirmed.text).toBe(200);
  const subscriptionId = confirmed.body.subscription_id as string;
  await ingestUsageReport(b.p.s.deps, fleet.nodeId, {
    report_id: 1n,
    entries: [{ subscription_id: subscriptionId, uplink_bytes: BigInt(UP), downlink_bytes: BigInt(DOWN) }],
  });
  const link = await b.p.s.api.get(`/portal/v1/subscriptions/${subscriptionId}/link`, { token: buyer.token });
  expect(link.status, link.text).toBe(200);
  subPath = new URL(link.body.url).pathname;
}, 60_000);
afterAll(() => b?.stop());

/** What apps read: the subscription-userinfo header of the link's answer to an app. */
async function userinfo(): Promise<{ upload: number; download: number; total: number; expire: number }> {
  const res = await fetch(`${b.p.s.url}${subPath}`, { headers: { 'user-agent': 'v2rayNG/1.9.30' } });
  expect(res.status).toBe(200);
  const header = res.headers.get('subscription-userinfo') ?? '';
  const values = Object.fromEntries(header.split('; ').map((kv) => kv.split('=') as [string, string]));
  return { upload: Number(values.upload), download: Number(values.download), total: Number(values.total), expire: Number(values.expire) };
}

describe('one subscription, the same numbers everywhere', () => {
  it('the /sub page shows the formatter’s reading of the header’s bytes and expiry: "50 GiB", "in 30 days"', async () => {
    const info = await userinfo();
    expect(info).toEqual({ upload: UP, download: DOWN, total: 50 * GiB, expire: info.expire });
    expect(info.expire).toBe(Math.floor((b.p.s.clock.now().getTime() + 30 * 86_400_000) / 1000));

    const res = await fetch(`${b.p.s.url}${subPath}`, {
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0', accept: 'text/html,*/*;q=0.8' },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    // The text of the element with this id (its tag closes on the same line).
    const byId = (id: string) => (new RegExp(`<(\\w+) id="${id}"[^>]*>(.*?)</\\1>`).exec(page)?.[2] ?? '').replace(/<[^>]+>/g, '');
    expect(byId('used')).toBe(formatBytes(info.upload + info.download));
    expect(byId('used')).toBe('1.49 GiB');
    expect(byId('total')).toBe(formatBytes(info.total));
    expect(byId('total')).toBe('50 GiB');
    expect(page).toContain(`upload ${formatBytes(info.upload)} · download ${formatBytes(info.download)}`);
    expect(byId('expiry-text')).toBe(`${formatDateTimeUtc(new Date(info.expire * 1000))} · in 30 days`);
  });

  it('the receipt mail says the same moment and "in 30 days"', async () => {
    const info = await userinfo();
    await until('the receipt', () => b.mail.mails.some((m) => m.to === buyer.email && m.category === 'payment_succeeded'));
    const receipt = b.mail.mails.find((m) => m.to === buyer.email && m.category === 'payment_succeeded');
    expect(receipt?.text).toContain(`runs until ${formatDateTimeUtc(new Date(info.expire * 1000))} (in 30 days).`);
  });

  describe.skipIf(!chromiumPath())('the portal page, in a real browser (Chromium)', () => {
    let browser: HeadlessBrowser;
    beforeAll(async () => {
      browser = await startHeadlessBrowser();
    });
    afterAll(() => browser?.close());

    it('signed in by the mailed link, it lists the subscription as "1.49 GiB used of 50 GiB · until <the same moment> · in 30 days"', async () => {
      const info = await userinfo();
      const links = () => b.mail.mails.filter((m) => m.to === buyer.email && m.category === 'magic_link');
      const before = links().length;
      await b.p.s.api.post('/portal/v1/auth/magic-link', { email: buyer.email });
      await until('a new sign-in link', () => links().length > before);
      const token = /#token=([A-Za-z0-9_-]+)/.exec(links().at(-1)?.text ?? '')?.[1];
      const tab = await browser.open(`${b.p.s.url}/portal/v1/auth/magic-link#token=${token}`);
      await tab.evaluate(`document.getElementById('go').click()`);
      const line = await tab.waitFor<string>(
        `(function () { var li = document.querySelector('#subs li'); return li && li.querySelector('code').textContent ? li.textContent : ''; })()`,
      );
      const moment = formatDateTimeUtc(new Date(info.expire * 1000));
      expect(line).toBe(
        `active · ${formatBytes(info.upload + info.download)} used of ${formatBytes(info.total)} · until ${moment} · in 30 days · ${b.p.s.url.replace(/^http:\/\/[^/]+/, 'https://cp.example.com')}${subPath}`,
      );
      expect(line).toContain('1.49 GiB used of 50 GiB');
    });
  });
});
