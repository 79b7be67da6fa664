import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '@svc/config';
import { type AgentReleaseOffer, grpcEndpoint, INSTALL_SCRIPT_PATH, publicBaseUrl } from '@svc/domain';
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

/** Releases read, by directory: read again when the directory's listing or files change. */
const releases = new Map<string, { key: string; release: AgentRelease | null }>();

/** What a directory holds now, cheaply: names, sizes and times of the release files. */
function listingKey(dir: string): string {
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith('svc-agent-'))
      .sort()
      .map((n) => {
        const st = statSync(join(dir, n));
        return `${n}:${st.size}:${st.mtimeMs}:${st.ino}`;
      })
      .join('|');
  } catch {
    return '';
  }
}

/**
 * The release this control plane serves now (http.agent_dist_dir): read once, and again when a
 * build or a deploy replaces it (the routes and the upgrade offer see the new one at once).
 */
export function currentAgentRelease(config: Config): AgentRelease | null {
  const dir = agentDistDir(config);
  if (!dir) return null;
  const key = listingKey(dir);
  const known = releases.get(dir);
  if (known && known.key === key) return known.release;
  const release = readAgentRelease(dir);
  releases.set(dir, { key, release });
  return release;
}

/** The release as an upgrade offer: absolute URL under the public base URL (the node downloads it). */
export function agentReleaseOffer(config: Config): AgentReleaseOffer | null {
  const r = currentAgentRelease(config);
  return r ? { version: r.version, sha256: r.sha256, url: `${publicBaseUrl(config)}${AGENT_FILES_PATH}/${r.version}/${r.file}` } : null;
}

export const NO_RELEASE =
  'no agent release to serve: run `pnpm build` (apps/agent writes dist-one/), or set SVC_AGENT_DIST_DIR to a directory holding svc-agent-<version>.mjs and its .sha256';

/** A value as one single-quoted shell word. */
const shellWord = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

const INSTALL_TEMPLATE = readFileSync(new URL('./agent-install.sh', import.meta.url), 'utf8');

/** install.sh with this control plane's address, gateway and release filled in. */
export function renderInstallScript(config: Config, r: AgentRelease): string {
  const values: Record<string, string> = {
    BASE_URL: publicBaseUrl(config),
    AGENT_VERSION: r.version,
    AGENT_FILE: r.file,
    AGENT_SHA256: r.sha256,
    GRPC_ENDPOINT: grpcEndpoint(config),
  };
  return INSTALL_TEMPLATE.replace(/@@([A-Z0-9_]+)@@/g, (whole, name: string) =>
    name in values ? shellWord(values[name] as string) : whole,
  );
}

/**
 * GET /agent/latest (what this control plane serves: version, file, SHA-256, URL),
 * GET /agent/{version}/{file} (the file, immutable), /agent/{version}/{file}.sha256
 * (sha256sum's format), and GET /agent/install.sh (the installer with this control plane's
 * address, gateway and release in it). Public, like any software download: nothing secret is in
 * them, and the enrollment token never travels in these URLs.
 */
export function registerAgentFiles(root: Hono<AppEnv>, config: Config): void {
  const prefix = publicPrefixOf(config.http.public_base_url);
  const current = () => currentAgentRelease(config);
  const none = (c: Context<AppEnv>) => problemResponse(c, 'unavailable', NO_RELEASE);

  root.get(INSTALL_SCRIPT_PATH, (c) => {
    const r = current();
    if (!r) return none(c);
    return c.text(renderInstallScript(config, r), 200, {
      'content-type': 'text/x-shellscript; charset=utf-8',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
  });
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
