import { PAGE_CSS } from './html-assets.ts';
import { escapeHtml as h } from './html-escape.ts';

/**
 * The start of every page a subscription link shows a browser, up to the opening `<main>`: one
 * stylesheet (the one the pages' CSP allows), the same meta (not indexed, no referrer, light and
 * dark), so the page and the error page look alike and change together.
 */
export function pageHead(lang: string, title: string): string[] {
  return [
    '<!doctype html>',
    `<html lang="${h(lang)}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex, nofollow">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${h(title)}</title>`,
    `<style>${PAGE_CSS}</style>`,
    '</head>',
    '<body>',
    '<main>',
  ];
}
