import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The domain holds rules, not vendor clients (issue 33 item 1): vendor SDKs and HTTP clients
// live in @svc/providers behind the ports the domain declares (payments, DNS, OAuth, ACME).
// `STILL_INSIDE` is what has not moved yet: empty, and it may only stay so.
const HERE = fileURLToPath(new URL('.', import.meta.url));
const manifest = JSON.parse(readFileSync(join(HERE, '../package.json'), 'utf8')) as { dependencies: Record<string, string> };

const FORBIDDEN = ['stripe', 'axios', 'node-fetch', 'got', 'undici', 'ky', 'superagent', 'acme-client', 'openid-client'];
/** Vendor SDKs still in the domain, to move to @svc/providers: none. */
const STILL_INSIDE: string[] = [];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('packages/domain', () => {
  it('depends on no vendor SDK or HTTP client but those not moved yet', () => {
    const present = FORBIDDEN.filter((name) => name in manifest.dependencies);
    expect(present).toEqual(STILL_INSIDE);
  });

  it('imports none of them in its code but those not moved yet', () => {
    const imported = new Set<string>();
    for (const file of sources(HERE)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/from '([^']+)'/g)) {
        const spec = m[1] as string;
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
        if (FORBIDDEN.includes(pkg)) imported.add(pkg);
      }
    }
    expect([...imported].sort()).toEqual(STILL_INSIDE);
  });
});
