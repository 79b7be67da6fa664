import { escapeHtml as h } from './html-escape.ts';
import { pageHead } from './html-head.ts';

/**
 * What a person who opens a subscription link in a browser sees when the link answers an error
 * instead of the page (GET /sub/{token}: an unknown, rotated or malformed token, a failure on
 * our side). The page's look (its stylesheet, so the page's CSP allows it) and no script. The
 * words depend only on the status: nothing tells a stranger whether a token ever existed,
 * since an unknown and a rotated token get the same 404 and so the same page.
 */
export interface ErrorPageOptions {
  /** The operator's support link (settings `support_url`), offered as where to ask; http(s) only. */
  supportUrl?: string | null | undefined;
}

const TEXTS = {
  invalid: [
    'This link is not valid',
    'This subscription link is not valid, or no longer valid. Ask your provider for the new link and add that one to your app.',
  ],
  busy: ['Too many requests', 'Too many requests came from your network. Wait a minute, then open the link again.'],
  failed: ['Temporarily unavailable', 'The service cannot answer right now. Try again in a few minutes.'],
} as const;

export function renderErrorPage(status: number, opts: ErrorPageOptions = {}): string {
  const [title, text] = status === 429 ? TEXTS.busy : status >= 500 ? TEXTS.failed : TEXTS.invalid;
  const support = httpUrl(opts.supportUrl);
  return [
    ...pageHead('en', title),
    `<header id="error" data-status="${status}">`,
    `<h1>${h(title)}</h1>`,
    `<p>${h(text)}</p>`,
    ...(support ? [`<p><a class="app" id="support" href="${h(support)}">Contact support</a></p>`] : []),
    '</header>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function httpUrl(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    const { protocol } = new URL(raw);
    return protocol === 'https:' || protocol === 'http:' ? raw : null;
  } catch {
    return null;
  }
}
