// How long the panel's table takes to show a page of rows (issue 30 item 6: < 300 ms), in
// Debian's Chromium driven by playwright-core against the real system (`svc start`, embedded
// database). The browser helpers are the admin web app's own test helpers.
import { startControlPlane } from '@svc/testkit';
import { launchBrowser, openPage } from '../../apps/admin-web/test/browser.ts';
import { env, loadNow, log, machine, main, n, pct, publish, quietMachine, revision } from '../common/run.ts';

const ROUNDS = env('BENCH_RENDER_ROUNDS', 40);
/** One domain per round: every search and every sort asks for rows the query cache has not seen. */
const DOMAINS = ROUNDS;
/** Subscriptions per domain: one page of the panel's list (it asks for 100). */
const PER_DOMAIN = env('BENCH_RENDER_PER_DOMAIN', 100);

const OWNER = { email: 'render-bench@example.com', password: 'render-bench-password-1' };

type Page = Awaited<ReturnType<typeof openPage>>['page'];

/**
 * In the page: waits until the table's first row shows `marker` (the rows of the new page),
 * then two animation frames (the frame is painted), and answers how long that took from the
 * end of the list response (resource timing) and from `startedAt`.
 */
const WAIT_FOR_ROWS = `(({ marker, unlike, startedAt }) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => {
    const first = document.querySelector('table tbody tr td');
    const seen = performance.getEntriesByType('resource').map((e) => Math.round(e.startTime) + ' ' + e.name.slice(-80)).join('; ');
    reject(new Error('rows with ' + marker + ' never showed: first cell ' + (first && first.textContent) + ', since ' + Math.round(startedAt) + ': ' + seen));
  }, 15000);
  let done = false;
  const check = () => {
    if (done) return;
    const first = document.querySelector('table tbody tr td');
    if (!first || !first.textContent.includes(marker) || first.textContent === unlike) return;
    // The list request this input caused: the newest one that started after it.
    const response = performance
      .getEntriesByType('resource')
      .filter((e) => e.name.includes('/api/v1/subscriptions?') && e.startTime >= startedAt)
      .pop();
    if (!response) return;
    done = true;
    observer.disconnect();
    clearInterval(poll);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      clearTimeout(timer);
      const now = performance.now();
      resolve({ fromResponse: now - response.responseEnd, fromInput: now - startedAt, rows: document.querySelectorAll('table tbody tr').length });
    }));
  };
  const observer = new MutationObserver(check);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  const poll = setInterval(check, 2);
  check();
}))`;

/** The baseline: the same rows as plain DOM (no React, no table library), from JSON in hand to painted. */
const PLAIN_DOM = `((rows) => new Promise((resolve) => {
  const t0 = performance.now();
  const data = JSON.parse(rows);
  const table = document.createElement('table');
  const body = document.createElement('tbody');
  for (const r of data) {
    const tr = document.createElement('tr');
    for (const v of [r.note ?? r.id, r.status, String(r.used_bytes), r.expires_at ?? '-', r.renewal]) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  table.appendChild(body);
  document.body.appendChild(table);
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const ms = performance.now() - t0;
    table.remove();
    resolve(ms);
  }));
}))`;

async function seed(api: Awaited<ReturnType<typeof startControlPlane>>['api']): Promise<void> {
  const started = Date.now();
  const jobs: Array<() => Promise<void>> = [];
  for (let d = 0; d < DOMAINS; d++) {
    for (let i = 0; i < PER_DOMAIN / 4; i++) {
      jobs.push(async () => {
        const client = await api.post('/api/v1/clients', { email: `c${i}@d${d}.example` });
        if (client.status !== 201) throw new Error(client.text);
        for (let k = 0; k < 4; k++) {
          const expires = new Date(Date.now() + (1 + 300 - ((i * 4 + k) % 300)) * 86_400_000).toISOString();
          const sub = await api.post('/api/v1/subscriptions', {
            client_id: client.body.id,
            access_group_ids: [],
            note: `d${d}-s${i * 4 + k}`,
            expires_at: expires,
          });
          if (sub.status !== 201) throw new Error(sub.text);
        }
      });
    }
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < jobs.length) await (jobs[next++] as () => Promise<void>)();
    }),
  );
  log(`seeded ${n(DOMAINS * PER_DOMAIN)} subscriptions in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function run(): Promise<void> {
  const before = await quietMachine();
  const cp = await startControlPlane({ owner: OWNER });
  const browser = await launchBrowser();
  try {
    await seed(cp.api);
    const { page } = await openPage(browser, { width: 1280, height: 860 });
    await page.goto(`${cp.http}/admin/`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByRole('textbox', { name: 'Password' }).fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 2, name: 'Dashboard' }).waitFor();
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Subscriptions' }).click();
    await page.getByRole('heading', { level: 2, name: 'Subscriptions' }).waitFor();
    await page.getByTestId('list-search').waitFor();
    // Resource timing keeps 250 entries by default: the panel's own requests would fill it.
    await page.evaluate('performance.setResourceTimingBufferSize(100000)');

    const search: Array<{ fromResponse: number; fromInput: number; rows: number }> = [];
    const sorted: Array<{ fromResponse: number; fromInput: number; rows: number }> = [];
    const plain: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // A search by the clients' email domain: a full page (100 subscriptions) the cache has not seen.
      const d = r;
      const box = page.getByTestId('list-search');
      await box.fill(`@d${d}.example`);
      const startedAt = (await page.evaluate('performance.clearResourceTimings(), performance.now()')) as number;
      const waiting = page.evaluate(`${WAIT_FOR_ROWS}(${JSON.stringify({ marker: `d${d}-`, unlike: null, startedAt })})`);
      await box.press('Enter');
      search.push((await waiting) as { fromResponse: number; fromInput: number; rows: number });

      // The same rows sorted by expiry from the header: a new page of rows in another order.
      const sortStarted = (await page.evaluate('performance.clearResourceTimings(), performance.now()')) as number;
      const firstBefore = (await page.locator('table tbody tr td').first().textContent()) ?? '';
      const sortWaiting = page.evaluate(
        `${WAIT_FOR_ROWS}(${JSON.stringify({ marker: `d${d}-`, unlike: firstBefore, startedAt: sortStarted })})`,
      );
      await page.getByRole('button', { name: /^Expires/ }).click();
      sorted.push((await sortWaiting) as { fromResponse: number; fromInput: number; rows: number });
      await setSort(page, 'created');

      // Baseline: the page's JSON as plain DOM rows, in the same tab.
      const rows = await page.evaluate(
        `fetch(${JSON.stringify(`${cp.http}/api/v1/subscriptions?limit=100&q=%40d${d}.example`)}, { headers: { authorization: 'Bearer ' + ${JSON.stringify(await cp.api.token())} } }).then((r) => r.json()).then((b) => JSON.stringify(b.items))`,
      );
      plain.push((await page.evaluate(`${PLAIN_DOM}(${JSON.stringify(rows)})`)) as number);
    }
    const after = loadNow();
    const line = (label: string, xs: number[]) => `| ${label} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 99).toFixed(1)} |`;
    const date = new Date().toISOString().slice(0, 10);
    publish([
      `### ${date} — admin panel table render, Chromium`,
      '',
      `Machine: ${machine()}, Chromium (Debian) headless, 1280×860. Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${after}. ` +
        `${n(DOMAINS * PER_DOMAIN)} subscriptions on the embedded database; each search answers one full page (100 rows, the panel's page size).`,
      '',
      '| measure | runs | p50 ms | p99 ms |',
      '|---|---|---|---|',
      line(
        'search page: list response received → rows painted (target < 300 ms)',
        search.map((s) => s.fromResponse),
      ),
      line(
        'search page: Enter → rows painted (server included)',
        search.map((s) => s.fromInput),
      ),
      line(
        'sort by a header: list response received → rows painted',
        sorted.map((s) => s.fromResponse),
      ),
      line(
        'sort by a header: click → rows painted (server included)',
        sorted.map((s) => s.fromInput),
      ),
      line('baseline: the same 100 rows as plain DOM, JSON in hand → painted', plain),
      '',
      `Rows in the DOM after a page of 100 (virtualized): ${search[search.length - 1]?.rows ?? '?'}.`,
    ]);
  } finally {
    await browser.close();
    await cp.stop();
  }
}

async function setSort(page: Page, sort: string): Promise<void> {
  const url = new URL(page.url());
  if (url.searchParams.get('sort') === sort) return;
  url.searchParams.set('sort', sort);
  // Through the router (pushState + popstate): a reload would drop the signed-in tab's memory.
  await page.evaluate(
    `history.pushState(history.state, '', ${JSON.stringify(url.pathname + url.search)}); dispatchEvent(new PopStateEvent('popstate', { state: history.state }))`,
  );
  await page.waitForURL((u) => u.searchParams.get('sort') === sort);
}

void main(run);
