import type { OpenAPIHono } from '@hono/zod-openapi';
import { FORMAT_BROWSER_MODULE } from '@svc/format/browser-module';
import type { AppEnv } from '@svc/http';

/**
 * The page a magic link opens by default (portal_auth.link_url unset):
 * GET /portal/v1/auth/magic-link#token=... Opening it uses nothing up: the token sits in the
 * fragment (never sent to a server, never in an access log) and is posted to
 * POST /portal/v1/auth/callback only when the person presses the button, so a mail scanner
 * that opens every link cannot spend it. Signed in, the page lists the customer's
 * subscriptions with their links: enough to try the portal on a fresh machine. An operator
 * with a front end of their own points portal_auth.link_url there instead.
 * Same-origin script only (no inline script), like the docs page. Sizes and times go through
 * @svc/format, served beside the page as the ES module it is built into (format.js), so the
 * page says "50 GiB" and "in 30 days" exactly as the /sub page and the mails do.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const page = (base: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign in</title>
<link rel="stylesheet" href="${base}/auth/magic-link/page.css">
</head>
<body>
<main>
<h1>Sign in</h1>
<p id="intro">Press the button to sign in with the link from your mail. It works once.</p>
<button id="go" type="button">Sign in</button>
<p id="status" role="status"></p>
<section id="account" hidden>
<h2 id="who"></h2>
<ul id="subs"></ul>
</section>
</main>
<script type="module" src="${base}/auth/magic-link/page.js"></script>
</body>
</html>
`;

const css = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
main{max-width:40rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:8px;background:#2457d6;color:#fff;cursor:pointer}
button:disabled{background:#8a9bc4}
code{word-break:break-all;background:#eef1f6;padding:.1rem .3rem;border-radius:4px}
li{margin:.8rem 0}
`;

const script = (base: string) => `import { formatBytes, formatDateTimeUtc, formatRelativeTime } from './format.js';
(function () {
  var token = new URLSearchParams(location.hash.slice(1)).get('token');
  var go = document.getElementById('go');
  var status = document.getElementById('status');
  history.replaceState(null, '', location.pathname);
  if (!token) { go.disabled = true; status.textContent = 'This page needs the link from your mail.'; return; }
  function api(path, opts) {
    return fetch(${JSON.stringify(base)} + path, opts).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (b) { return { ok: r.ok, body: b }; });
    });
  }
  go.addEventListener('click', function () {
    go.disabled = true;
    status.textContent = 'Signing in…';
    api('/auth/callback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token }) })
      .then(function (res) {
        if (!res.ok) { status.textContent = res.body.detail || 'This link cannot be used.'; return; }
        var auth = { authorization: 'Bearer ' + res.body.access_token };
        status.textContent = 'Signed in.';
        document.getElementById('intro').hidden = true;
        go.hidden = true;
        return api('/me', { headers: auth }).then(function (me) {
          if (!me.ok) return;
          document.getElementById('account').hidden = false;
          document.getElementById('who').textContent = me.body.client.email;
          var list = document.getElementById('subs');
          if (me.body.subscriptions.length === 0) list.textContent = 'No subscriptions yet.';
          me.body.subscriptions.forEach(function (s) {
            var li = document.createElement('li');
            var used = formatBytes(s.used_bytes) + ' used' + (s.traffic_limit_bytes === null ? '' : ' of ' + formatBytes(s.traffic_limit_bytes));
            var until = s.expires_at === null ? 'never expires' : 'until ' + formatDateTimeUtc(s.expires_at) + ' · ' + formatRelativeTime(new Date(s.expires_at), new Date());
            li.textContent = s.status + ' · ' + used + ' · ' + until + ' · ';
            var code = document.createElement('code');
            li.appendChild(code);
            list.appendChild(li);
            api('/subscriptions/' + encodeURIComponent(s.id) + '/link', { headers: auth }).then(function (l) { if (l.ok) code.textContent = l.body.url; });
          });
        });
      })
      .catch(function () { status.textContent = 'The server cannot be reached.'; go.disabled = false; });
  });
})();
`;

export function registerMagicLinkPage(app: OpenAPIHono<AppEnv>, mountedAt: string): void {
  const headers = { 'content-security-policy': CSP, 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' };
  app.get('/auth/magic-link', (c) => c.body(page(mountedAt), 200, { ...headers, 'content-type': 'text/html; charset=utf-8' }));
  app.get('/auth/magic-link/page.js', (c) =>
    c.body(script(mountedAt), 200, { ...headers, 'content-type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/auth/magic-link/format.js', (c) =>
    c.body(FORMAT_BROWSER_MODULE, 200, { ...headers, 'content-type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/auth/magic-link/page.css', (c) => c.body(css, 200, { ...headers, 'content-type': 'text/css; charset=utf-8' }));
}
