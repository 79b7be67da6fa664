import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * What a test runs for a deployable's entry `apps/<app>/src/main.ts`: the app's precompiled
 * bundle `apps/<app>/dist/main.js` when it is built and newer than every workspace source it was
 * built from (the esbuild metafile beside it lists them), else the TypeScript under tsx.
 *
 * The bundle is what the images and docker-compose run, and it starts in ~1 s where tsx takes
 * ~4-6 s on a 2-core machine (it compiles hundreds of files at every start): the suites that
 * start apps as child processes (the CLI, the agent end to end, split mode, faults) start dozens
 * each. `pnpm test` builds first (turbo), so the bundles are fresh there; running vitest on a
 * changed tree without a build falls back to the source, never to a stale bundle.
 * SVC_TEST_FROM_SOURCE=1 always runs the source.
 */
export function appEntry(entry: string): { argv: string[]; bundled: boolean } {
  const source = { argv: ['--import', 'tsx', resolve(REPO_ROOT, entry)], bundled: false };
  const m = /^apps\/([a-z0-9-]+)\/src\/main\.ts$/.exec(entry);
  if (!m || process.env.SVC_TEST_FROM_SOURCE === '1')
    return entry.endsWith('.ts') ? source : { argv: [resolve(REPO_ROOT, entry)], bundled: true };
  const bundle = resolve(REPO_ROOT, 'apps', m[1] as string, 'dist', 'main.js');
  return freshBundle(bundle) ? { argv: [bundle], bundled: true } : source;
}

const checked = new Map<string, boolean>();

/** Whether `bundle` exists and no workspace file it was built from changed after it. */
function freshBundle(bundle: string): boolean {
  let fresh = checked.get(bundle);
  if (fresh !== undefined) return fresh;
  fresh = false;
  const meta = resolve(dirname(bundle), 'meta.json');
  if (existsSync(bundle) && existsSync(meta)) {
    const built = statSync(bundle).mtimeMs;
    const appDir = resolve(dirname(bundle), '..');
    const inputs = Object.keys((JSON.parse(readFileSync(meta, 'utf8')) as { inputs: Record<string, unknown> }).inputs);
    fresh = inputs
      .filter((p) => !p.includes('node_modules'))
      .every((p) => {
        const file = resolve(appDir, p);
        return existsSync(file) && statSync(file).mtimeMs <= built;
      });
  }
  checked.set(bundle, fresh);
  return fresh;
}
