import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A clone holds only the repository: a link in the README or docs/ that leaves it (the
 * `../shared/...` of a working copy beside other directories), names a file that is not
 * there, or a heading that is not there, is dead for every reader. Links are read as GitHub
 * renders them: code blocks and code spans are not links, a path is relative to the file it is
 * written in (a leading `/` is the repository's root), and `file.md#anchor` names a heading by
 * GitHub's slug.
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** README.md and every Markdown file under docs/, repository-relative. */
function documents(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found.sort();
}

/** The text with fenced code blocks blanked (their lines kept, so line numbers stay true). */
function withoutFences(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null && open?.[1]) {
      fence = open[1];
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence[0]?.repeat(fence.length) ?? '')) fence = null;
      return '';
    }
    return line;
  });
}

/** A line with its code spans blanked: `[a](b)` inside backticks is text, not a link. */
const withoutCodeSpans = (line: string) => line.replace(/(`+)[\s\S]*?\1/g, (span) => ' '.repeat(span.length));

/** GitHub's heading slug (github-slugger): lower case, punctuation but `-` and `_` dropped, each space a hyphen. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '') // code and emphasis marks
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a Markdown file offers: heading slugs (repeats numbered as GitHub does) and HTML ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading?.[1] !== undefined) {
      const slug = githubSlug(heading[1]);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const html of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) if (html[1]) anchors.add(html[1]);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images `[text](target "title")`, and reference definitions `[label]: target`. */
function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  withoutFences(markdown).forEach((raw, i) => {
    const line = withoutCodeSpans(raw);
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g))
      if (m[1]) links.push({ line: i + 1, target: m[1].replace(/^<|>$/g, '') });
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (definition?.[1]) links.push({ line: i + 1, target: definition[1].replace(/^<|>$/g, '') });
  });
  return links;
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target); // http:, https:, mailto:, ...

/** Why a link of `doc` (repository-relative) does not resolve inside the repository, or null. */
function deadLink(doc: string, target: string, root: string = ROOT): string | null {
  const [rawPath = '', anchor] = target.split('#', 2);
  const path = decodeURIComponent(rawPath.split('?')[0] ?? '');
  const file = path === '' ? join(root, doc) : path.startsWith('/') ? join(root, path) : resolve(root, dirname(doc), path);
  const inside = relative(root, file);
  if (inside.startsWith('..') || inside.startsWith(sep) || resolve(file) !== file) return 'leaves the repository';
  if (!existsSync(file)) return `${inside} does not exist`;
  if (anchor !== undefined && anchor !== '' && file.endsWith('.md') && statSync(file).isFile()) {
    if (!anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) return `${inside} has no heading #${anchor}`;
  }
  return null;
}

/** Repository-relative paths git ignores (generated, never in a clone), of those given. */
function ignoredByGit(paths: string[]): Set<string> {
  if (paths.length === 0) return new Set();
  try {
    const out = execFileSync('git', ['check-ignore', '--stdin'], { cwd: ROOT, input: paths.join('\n'), encoding: 'utf8' });
    return new Set(out.split('\n').filter(Boolean));
  } catch (err) {
    // Exit 1: none is ignored. Anything else (no git, not a checkout): nothing to add.
    const status = (err as { status?: number }).status;
    const stdout = (err as { stdout?: string }).stdout ?? '';
    return status === 1 ? new Set() : new Set(stdout.split('\n').filter(Boolean));
  }
}

function problemsOf(doc: string): string[] {
  const problems: string[] = [];
  const resolved: Array<{ link: Link; path: string }> = [];
  for (const link of linksOf(readFileSync(join(ROOT, doc), 'utf8'))) {
    if (external(link.target)) continue;
    const why = deadLink(doc, link.target);
    if (why) problems.push(`${doc}:${link.line} (${link.target}): ${why}`);
    else if (!link.target.startsWith('#')) {
      const path = decodeURIComponent(link.target.split('#')[0]?.split('?')[0] ?? '');
      resolved.push({ link, path: relative(ROOT, path.startsWith('/') ? join(ROOT, path) : resolve(ROOT, dirname(doc), path)) });
    }
  }
  const ignored = ignoredByGit(resolved.map((r) => r.path));
  for (const { link, path } of resolved)
    if (ignored.has(path)) problems.push(`${doc}:${link.line} (${link.target}): ${path} is ignored by git, so no clone has it`);
  return problems;
}

describe('every relative link in the README and docs resolves inside the repository', () => {
  it.each(documents())('%s', (doc) => {
    expect(problemsOf(doc)).toEqual([]);
  });

  it('the check itself: a link out of the clone, to a missing file or to a missing heading is dead; GitHub slugs match', () => {
    expect(deadLink('README.md', '../shared/spec/control-plane-spec.md')).toBe('leaves the repository');
    expect(deadLink('docs/portal.md', '../../outside.md')).toBe('leaves the repository');
    expect(deadLink('docs/portal.md', 'no-such-page.md')).toBe('docs/no-such-page.md does not exist');
    expect(deadLink('docs/portal.md', 'oauth.md#no-such-heading')).toBe('docs/oauth.md has no heading #no-such-heading');
    expect(deadLink('docs/portal.md', 'oauth.md#the-flow')).toBeNull();
    expect(deadLink('docs/portal.md', '#budgets-spec-510-and-the-lock-out-nobody-can-cause')).toBeNull();
    expect(deadLink('README.md', 'docs/agent.md#versions')).toBeNull();
    expect(githubSlug('`rfc2136`: dynamic update with TSIG (BIND, PowerDNS, Knot)')).toBe(
      'rfc2136-dynamic-update-with-tsig-bind-powerdns-knot',
    );
    expect(githubSlug('Why a patch of @grpc/grpc-js (issue 17 item 5)')).toBe('why-a-patch-of-grpcgrpc-js-issue-17-item-5');
    expect(linksOf('a [x](y.md) `[no](code.md)`\n```\n[no](fence.md)\n```\n[ref]: z.md')).toEqual([
      { line: 1, target: 'y.md' },
      { line: 5, target: 'z.md' },
    ]);
  });

  const gitCheckout = existsSync(join(ROOT, '.git'));
  it.skipIf(!gitCheckout)('the check itself: a link to a path git ignores (generated code, a build) is dead, since no clone has it', () => {
    expect(ignoredByGit(['packages/proto/src/gen', 'README.md', 'apps/cli/dist'])).toEqual(
      new Set(['packages/proto/src/gen', 'apps/cli/dist']),
    );
  });
});
