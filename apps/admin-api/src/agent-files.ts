import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '@svc/config';
import { type AppEnv, problemResponse, publicPrefixOf } from '@svc/http';
import type { Context, Hono } from 'hono';

export const AGENT_FILES_PATH = '/agent';

/** The one-file agent this control plane hands to nodes (issue 31 item 2). */
export interface AgentRelease {
  version: string;
  /** `svc-agent-<version>.mjs`. */
  file: string;
  sha256: string;
  body: Buffer;
}

const RELEASE_NAME = /^svc-agent-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\.mjs$/;

/**
 * The agent release in `dir`: the one `svc-agent-<version>.mjs` whose `.sha256` beside it names
 * it and matches its bytes. A file whose checksum file disagrees is not served: a node would
 * refuse it anyway, and the operator learns it here first (null, and the routes say why).
 */
export function readAgentRelease(dir: string | null): AgentRelease | null {
  if (!dir || !existsSync(dir)) return null;
  const names = readdirSync(dir).filter((n) => RELEASE_NAME.test(n));
  if (names.length !== 1) return null;
  const file = names[0] as string;
  const version = (RELEASE_NAME.exec(file) as RegExpExecArray)[1] as string;
  const sumFile = join(dir, `${file}.sha256`);
  if (!existsSync(sumFile)) return null;
  const body = readFileSync(join(dir, file));
  const sha256 = createHash('sha256').update(body).digest('hex');
  const [stated, named] = readFileSync(sumFile, 'utf8').trim().split(/\s+/);
  if (stated !== sha256 || named !== file) return null;
  return { version, file, sha256, body };
}

/**
 * GET /agent/latest (what this control plane serves: version, file, SHA-256, URL) and
 * GET /agent/{version}/{file} (the file, immutable) and /agent/{version}/{file}.sha256
 * (sha256sum's format). Public, like any software download: nothing secret is in them, and
 * the enrollment token never travels in these URLs. Read once; a build finishing after the
 * start is picked up on the next request that finds none.
 */
export function registerAgentFiles(root: Hono<AppEnv>, config: Config): void {
  const dir = agentDistDir(config);
  const prefix = publicPrefixOf(config.http.public_base_url);
  let release: AgentRelease | null = null;
  const current = () => {
    release ??= readAgentRelease(dir);
    return release;
  };
  const none = (c: Context<AppEnv>) =>
    problemResponse(
      c,
      'unavailable',
      'no agent release to serve: run `pnpm build` (apps/agent writes dist-one/), or set SVC_AGENT_DIST_DIR to a directory holding svc-agent-<version>.mjs and its .sha256',
    );

  root.get(`${AGENT_FILES_PATH}/latest`, (c) => {
    const r = current();
    if (!r) return none(c);
    c.header('cache-control', 'no-cache');
    return c.json({ version: r.version, file: r.file, sha256: r.sha256, url: `${prefix}${AGENT_FILES_PATH}/${r.version}/${r.file}` });
  });
  root.on(['GET', 'HEAD'], `${AGENT_FILES_PATH}/:version/:name`, (c) => {
    const r = current();
    if (!r) return none(c);
    const { version, name } = c.req.param();
    if (version !== r.version || (name !== r.file && name !== `${r.file}.sha256`))
      return problemResponse(c, 'not-found', `this control plane serves svc-agent ${r.version} only (${AGENT_FILES_PATH}/latest)`);
    const headers = { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' };
    if (name === r.file) {
      const h = { ...headers, 'content-type': 'text/javascript; charset=utf-8', 'x-checksum-sha256': r.sha256 };
      if (c.req.method === 'HEAD') return c.body(null, 200, { ...h, 'content-length': String(r.body.length) });
      return c.body(new Uint8Array(r.body), 200, h);
    }
    return c.text(`${r.sha256}  ${r.file}\n`, 200, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
  });
}

/** http.agent_dist_dir, else the workspace's apps/agent/dist-one, found from this module upwards. */
function agentDistDir(config: Config): string | null {
  if (config.http.agent_dist_dir) return config.http.agent_dist_dir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'agent', 'dist-one');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}
