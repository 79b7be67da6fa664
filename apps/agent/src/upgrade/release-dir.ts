import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fsyncDir } from '../state-files.ts';

/**
 * The directory install.sh keeps the agent's releases in (SVC_AGENT_RELEASE_DIR, /opt/svc-agent):
 * `svc-agent-<version>.mjs` files and `current.mjs`, a relative symlink naming the one the
 * service runs (`node /opt/svc-agent/current.mjs run`). The agent owns the directory, so it can
 * put a new release beside the old one and move the symlink in one rename.
 */
export const CURRENT = 'current.mjs';

/** Versions as release files are named: semver, nothing that could leave the directory. */
const VERSION = /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,64})?$/;
export const releaseFile = (version: string): string => {
  if (!VERSION.test(version)) throw new Error(`not a release version: ${JSON.stringify(version.slice(0, 80))}`);
  return `svc-agent-${version}.mjs`;
};

/** The largest agent file accepted (the release is ~1 MB). */
export const MAX_RELEASE_BYTES = 32 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 120_000;
const PROBE_TIMEOUT_MS = 20_000;

/** The release file current.mjs names, or null when there is no symlink. */
export async function currentRelease(dir: string): Promise<string | null> {
  try {
    return basename(await readlink(join(dir, CURRENT)));
  } catch {
    return null;
  }
}

/** Points current.mjs at `file` (a name in the directory) in one rename. */
export async function pointCurrentAt(dir: string, file: string): Promise<void> {
  const tmp = join(dir, `.${CURRENT}.${process.pid}`);
  await rm(tmp, { force: true });
  await symlink(file, tmp);
  await rename(tmp, join(dir, CURRENT));
  await fsyncDir(dir);
}

/**
 * Downloads the release at `url` into the directory as `svc-agent-<version>.mjs`: at most
 * MAX_RELEASE_BYTES, refused unless its SHA-256 is `sha256`, then run once (`version`) with this
 * Node, refused unless it names itself `version`. Nothing is left behind on a refusal. Returns
 * the file's name.
 */
export async function fetchRelease(
  dir: string,
  r: { version: string; url: string; sha256: string },
  nodeBin: string = process.execPath,
  progress: (step: string) => void = () => {},
): Promise<string> {
  const file = releaseFile(r.version);
  if (!/^[0-9a-f]{64}$/.test(r.sha256)) throw new Error('the command carries no SHA-256 of the file');
  let url: URL;
  try {
    url = new URL(r.url);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(r.url.slice(0, 200))}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`not an http(s) URL: ${url.protocol}`);
  // Named .mjs: the probe runs it as an ES module before it takes its name.
  const part = join(dir, `.part-${process.pid}-${file}`);
  try {
    const body = await download(url, part);
    progress(`downloaded ${body.bytes} bytes`);
    if (body.sha256 !== r.sha256)
      throw new Error(`the file from ${url.href} does not match its SHA-256 (expected ${r.sha256}, got ${body.sha256}): refused`);
    progress('SHA-256 verified; running the new file once');
    const said = await probe(nodeBin, part);
    if (said !== r.version) throw new Error(`the new file names itself ${JSON.stringify(said.slice(0, 80))}, not ${r.version}: refused`);
    await rename(part, join(dir, file));
    await fsyncDir(dir);
    return file;
  } finally {
    await rm(part, { force: true });
  }
}

async function download(url: URL, to: string): Promise<{ sha256: string; bytes: number }> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  if (!res.ok || !res.body) throw new Error(`GET ${url.href}: ${res.status} ${res.statusText}`);
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_RELEASE_BYTES) throw new Error(`GET ${url.href}: ${declared} bytes, more than the ${MAX_RELEASE_BYTES} an agent is`);
  const hash = createHash('sha256');
  const handle = await open(to, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
  let bytes = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes > MAX_RELEASE_BYTES) throw new Error(`GET ${url.href}: more than the ${MAX_RELEASE_BYTES} bytes an agent is`);
      hash.update(chunk);
      await handle.write(chunk);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** What `node <file> version` prints: the whole bundle loads, and names its version. */
function probe(nodeBin: string, file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(nodeBin, [file, 'version'], { timeout: PROBE_TIMEOUT_MS, maxBuffer: 64 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`the new file does not run: ${(stderr || err.message).trim().slice(0, 500)}`));
      else resolve(stdout.trim());
    });
  });
}

/** Release files other than these go (the release before the current one stays for a rollback). */
export async function pruneReleases(dir: string, keep: string[], list: string[]): Promise<void> {
  for (const name of list)
    if (/^svc-agent-.+\.mjs$/.test(name) && !keep.includes(name)) {
      await unlink(join(dir, name)).catch(() => {});
      await unlink(join(dir, `${name}.sha256`)).catch(() => {});
    }
}
