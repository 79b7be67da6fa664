import { describe, expect, it } from 'vitest';
import { appsFor, CLIENT_APPS, clientApp, DEFAULT_APP_ORDER, importLinkFor, PLATFORMS, platformFromUserAgent } from './catalogue.ts';

/**
 * The import links as the apps read them (docs/research/client-deep-links.md says from which
 * source file or doc): the subscription URL comes back whole from where each app takes it, and
 * the name from where it reads one.
 */
const SUB = 'https://vpn.example.com/p/sub/AbC_123-xyz_0123456789abcdef';
const NAME = 'My VPN ✓';

/** What the app recovers from its link: the URL and the name, by its own parsing rule. */
function parsed(id: string): { url: string; name: string | null } {
  const link = importLinkFor(id, SUB, NAME) as string;
  const u = new URL(link);
  const fragment = u.hash ? decodeURIComponent(u.hash.slice(1)) : null;
  switch (id) {
    // The rest of the path is the URL (taken raw); the fragment, if any, the name.
    case 'happ':
    case 'streisand':
    case 'v2raytun':
    case 'hiddify':
    case 'shadowrocket': {
      const rest = link.slice(link.indexOf('://') + 3).replace(/^[a-z-]+\//, '');
      return { url: rest.split('#')[0] as string, name: fragment };
    }
    default:
      return { url: u.searchParams.get('url') as string, name: u.searchParams.get('name') ?? fragment };
  }
}

describe('the client apps catalogue', () => {
  it('every deep link gives the app the subscription URL whole, and the name where the app reads one', () => {
    for (const app of CLIENT_APPS) {
      if (!app.importLink) continue;
      const got = parsed(app.id);
      expect(got.url, app.id).toBe(SUB);
      if (got.name !== null) expect(got.name, app.id).toBe(NAME);
    }
  });

  it('the links have the forms the apps register (scheme and host), url last where the app takes the rest', () => {
    expect(importLinkFor('v2rayng', SUB, NAME)).toBe(`v2rayng://install-config?url=${encodeURIComponent(SUB)}#${encodeURIComponent(NAME)}`);
    expect(importLinkFor('sing-box', SUB, NAME)).toBe(
      `sing-box://import-remote-profile?url=${encodeURIComponent(SUB)}#${encodeURIComponent(NAME)}`,
    );
    expect(importLinkFor('hiddify', SUB, NAME)).toBe(`hiddify://import/${SUB}#${encodeURIComponent(NAME)}`);
    expect(importLinkFor('happ', SUB, NAME)).toBe(`happ://add/${SUB}`);
    const clash = importLinkFor('clash-verge', SUB, NAME) as string;
    expect(clash.startsWith('clash://install-config?name=')).toBe(true);
    expect(clash.endsWith(`&url=${encodeURIComponent(SUB)}`)).toBe(true);
    expect(importLinkFor('v2rayn', SUB, NAME)).toBeNull();
    expect(importLinkFor('no-such-app', SUB, NAME)).toBeNull();
  });

  it('ids are unique; every app is on a platform, with a download for each platform it is on', () => {
    expect(new Set(CLIENT_APPS.map((a) => a.id)).size).toBe(CLIENT_APPS.length);
    for (const app of CLIENT_APPS) {
      expect(app.platforms.length, app.id).toBeGreaterThan(0);
      for (const p of app.platforms) expect(app.downloads[p], `${app.id} on ${p}`).toMatch(/^https:\/\//);
    }
  });

  it('the default order names catalogued apps that run on that platform, every platform has some, and appsFor keeps the order', () => {
    for (const p of PLATFORMS) {
      const ids = DEFAULT_APP_ORDER[p];
      expect(ids.length, p).toBeGreaterThan(0);
      for (const id of ids) expect(clientApp(id)?.platforms, `${id} on ${p}`).toContain(p);
      expect(appsFor(p).map((a) => a.id)).toEqual([...ids]);
    }
    // An operator's order: unknown ids and apps not on the platform are skipped, repeats once.
    expect(appsFor('ios', ['stash', 'v2rayng', 'nothing', 'happ', 'stash']).map((a) => a.id)).toEqual(['stash', 'happ']);
  });

  it('places a browser on its platform by its User-Agent', () => {
    const cases: Array<[string, string | null]> = [
      ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36', 'android'],
      ['Mozilla/5.0 (Linux; Android 9; BRAVIA 4K GB) AppleWebKit/537.36 Chrome/88.0 Safari/537.36', 'android_tv'],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1', 'ios'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36', 'windows'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Version/17.5 Safari/605.1.15', 'macos'],
      ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'linux'],
      ['curl/8.5.0', null],
    ];
    for (const [ua, platform] of cases) expect(platformFromUserAgent(ua), ua).toBe(platform);
    // Bounded work on whatever a browser sends.
    expect(platformFromUserAgent(`${'a'.repeat(100_000)} android`)).toBeNull();
  });
});
