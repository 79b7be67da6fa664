import { createHash } from 'node:crypto';

/**
 * The page's only CSS and script, constant (nothing from the document goes in them), and a
 * Content-Security-Policy that allows exactly these two by hash and nothing else: no network
 * requests, no other scripts, no framing. The route may send it with the page.
 */

export const PAGE_CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--fg:#17191c;--muted:#5d6670;--line:#dde1e6;--accent:#2158d6;
--ok:#17803d;--warn:#a15c00;--bad:#c0262d;--code:#eef1f5}
@media (prefers-color-scheme:dark){:root{--bg:#111316;--card:#1b1e23;--fg:#e8eaed;--muted:#9aa3ad;--line:#2e333a;
--accent:#7aa5ff;--ok:#4cc97a;--warn:#f0a440;--bad:#ff6b70;--code:#262a31}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:46rem;margin:0 auto;padding:1rem}
section,header{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem;margin:0 0 1rem}
h1{font-size:1.5rem;margin:0 0 .5rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:0 0 .5rem}
h3{font-size:1rem;margin:0 0 .5rem;overflow-wrap:anywhere}p{margin:.25rem 0}
.muted{color:var(--muted);font-size:.9rem}
.status strong{display:inline-block;padding:.1rem .6rem;border-radius:999px;color:var(--card);margin-right:.4rem}
.status-active strong{background:var(--ok)}.status-pending strong{background:var(--warn)}
.status-limited strong,.status-expired strong,.status-disabled strong{background:var(--bad)}
progress{width:100%;height:.75rem;accent-color:var(--accent)}
.qr{display:block;width:100%;max-width:15rem;height:auto;margin:.5rem auto;border-radius:6px}
.apps{list-style:none;padding:0;margin:.75rem 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:.5rem}
.app{display:block;padding:.6rem .8rem;border:1px solid var(--line);border-radius:8px;color:var(--accent);
text-decoration:none;font-weight:600}.app small{display:block;color:var(--muted);font-weight:400}
.copy-row{display:flex;gap:.5rem;align-items:flex-start;margin:.5rem 0}
code{flex:1;min-width:0;background:var(--code);border-radius:6px;padding:.4rem .6rem;font-size:.8rem;
overflow-wrap:anywhere;user-select:all;-webkit-user-select:all}
button{font:inherit;font-size:.9rem;padding:.35rem .8rem;border:1px solid var(--line);border-radius:6px;
background:var(--card);color:var(--fg);cursor:pointer}
.servers{list-style:none;padding:0;margin:0}.server{border-top:1px solid var(--line);padding:.75rem 0}
.server:first-child{border-top:0}summary{cursor:pointer;color:var(--accent)}
`.trim();

/** Copy buttons: `<button data-copy="ID">` copies the text of element ID (selects it where the clipboard API is missing). */
export const PAGE_SCRIPT = `
document.addEventListener('click',function(e){
var b=e.target.closest?e.target.closest('button[data-copy]'):null;if(!b)return;
var t=document.getElementById(b.getAttribute('data-copy'));if(!t)return;
var r=document.createRange();r.selectNodeContents(t);var s=window.getSelection();s.removeAllRanges();s.addRange(r);
if(navigator.clipboard)navigator.clipboard.writeText(t.textContent).then(function(){
var o=b.textContent;b.textContent='Copied';setTimeout(function(){b.textContent=o},1500)},function(){});
});
`.trim();

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** For the `Content-Security-Policy` header of the page: only its own inline style and script run. */
export const HTML_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${sha256(PAGE_CSS)}`,
  `script-src ${sha256(PAGE_SCRIPT)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
