import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '@svc/testkit';

/**
 * The svc-agent release before this one, as a node that has not been upgraded yet runs it:
 * built from its own source at the commit it was released from (docs/upgrades.md, "Releasing").
 * When the agent's minor is raised, this becomes the release being replaced and its commit.
 */
export const PREVIOUS_AGENT_RELEASE = { version: '0.1.0', commit: '96d3c4f345363df2eb5206cd71c842a60c7f9412' } as const;

const git = (args: string[], opts: { input?: Buffer } = {}): Buffer =>
  execFileSync('git', args, { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, ...(opts.input ? { input: opts.input } : {}) });

const packageJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, any>;

/** The workspace directories a package at `dir` needs at run time (its @svc/* dependencies, transitively). */
function workspaceClosure(root: string, dir: string, seen = new Set<string>()): Set<string> {
  if (seen.has(dir)) return seen;
  seen.add(dir);
  for (const name of Object.keys(packageJson(join(root, dir)).dependencies ?? {})) {
    if (name.startsWith('@svc/')) workspaceClosure(root, `packages/${name.slice(5)}`, seen);
  }
  return seen;
}

/**
 * node_modules for an old package in the build tree: every third-party entry is today's
 * installed copy (the lockfile's versions; the agent's dependencies are pinned in the catalog),
 * every @svc/* entry is the old tree's own package.
 */
function mirrorNodeModules(tree: string, dir: string): void {
  const from = join(REPO_ROOT, dir, 'node_modules');
  const to = join(tree, dir, 'node_modules');
  mkdirSync(to, { recursive: true });
  if (!existsSync(from)) return;
  for (const entry of readdirSync(from)) {
    const names = entry.startsWith('@') ? readdirSync(join(from, entry)).map((n) => `${entry}/${n}`) : [entry];
    for (const name of names) {
      const target = name.startsWith('@svc/') ? join(tree, 'packages', name.slice(5)) : realpathSync(join(from, name));
      mkdirSync(dirname(join(to, name)), { recursive: true });
      symlinkSync(target, join(to, name));
    }
  }
}

export interface BuiltAgent {
  /** `node <main>` runs it (its version read from the package.json beside dist/, as in the image). */
  main: string;
  version: string;
  remove(): void;
}

/**
 * Builds PREVIOUS_AGENT_RELEASE from its commit: `git archive` of the agent, the workspace
 * packages it depends on and the .proto sources into a temporary tree, the generated code of
 * that tree's protos, then infra/bundle-app.mjs (the images' build) into dist/main.js. A second
 * or so; fails, saying why, when the commit is not in this clone (a shallow clone).
 */
export function buildPreviousAgent(): BuiltAgent {
  const { version, commit } = PREVIOUS_AGENT_RELEASE;
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `svc-agent ${version} was released from commit ${commit}, which is not in this clone: fetch the history (git fetch --unshallow)`,
    );
  }
  const released = JSON.parse(git(['show', `${commit}:apps/agent/package.json`]).toString()) as { version: string };
  if (released.version !== version) throw new Error(`commit ${commit} has svc-agent ${released.version}, not ${version}`);

  const tree = mkdtempSync(join(tmpdir(), `svc-agent-${version}-`));
  try {
    git(['archive', '--format=tar', '-o', join(tree, 'src.tar'), commit, 'tsconfig.base.json', 'apps/agent', 'packages', 'proto']);
    execFileSync('tar', ['-xf', 'src.tar'], { cwd: tree });
    const dirs = workspaceClosure(tree, 'apps/agent');
    for (const dir of dirs) mirrorNodeModules(tree, dir);
    // Generated code is not committed (src/gen): the old .proto files make it. When they are
    // today's, today's generated code is the same bytes and is copied instead of generated.
    const protosUnchanged = (() => {
      try {
        git(['diff', '--quiet', commit, 'HEAD', '--', 'proto']);
        return true;
      } catch {
        return false;
      }
    })();
    for (const dir of dirs) {
      const build = packageJson(join(tree, dir)).scripts?.build as string | undefined;
      if (!build?.startsWith('buf generate')) continue;
      const current = join(REPO_ROOT, dir, 'src', 'gen');
      if (protosUnchanged && existsSync(current)) cpSync(current, join(tree, dir, 'src', 'gen'), { recursive: true });
      else
        execFileSync('sh', ['-c', build], {
          cwd: join(tree, dir),
          env: { ...process.env, PATH: `${join(tree, dir, 'node_modules', '.bin')}:${process.env.PATH}` },
        });
    }
    execFileSync(process.execPath, [join(REPO_ROOT, 'infra', 'bundle-app.mjs'), 'src/main.ts', 'dist'], {
      cwd: join(tree, 'apps', 'agent'),
    });
    return { main: join(tree, 'apps', 'agent', 'dist', 'main.js'), version, remove: () => rmSync(tree, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(tree, { recursive: true, force: true });
    throw err;
  }
}
