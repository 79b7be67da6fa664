import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Files of the state directory, written so that a crash (kill -9, power loss) at any moment
 * leaves either the old or the new content: write a temporary file beside the target with
 * mode 0600, fsync it, rename it over the target, fsync the directory. Everything the agent
 * keeps is private to it (its key, the desired state with user credentials), so every file is
 * 0600 and every directory 0700, whatever the umask.
 */
export const SERVICE_STATE_DIR = '/var/lib/svc-agent';

/**
 * Where `enroll` and `run` keep the node's state when neither --state-dir nor
 * SVC_AGENT_STATE_DIR names it; both commands take the same default, so `enroll` then `run`
 * share one directory. As root (the service, the installer): /var/lib/svc-agent. As anybody else
 * (trying the agent from a terminal): $XDG_STATE_HOME/svc-agent, else ~/.local/state/svc-agent,
 * which that user can create (/var/lib is root's).
 */
export function defaultStateDir(env: NodeJS.ProcessEnv, uid: number | undefined = process.getuid?.()): string {
  if (uid === undefined || uid === 0) return SERVICE_STATE_DIR;
  const base = env.XDG_STATE_HOME?.startsWith('/') ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'svc-agent');
}

/** `--state-dir`, else SVC_AGENT_STATE_DIR, else defaultStateDir. */
export function stateDirFrom(flag: string | undefined, env: NodeJS.ProcessEnv, uid?: number): string {
  return flag ?? (env.SVC_AGENT_STATE_DIR || defaultStateDir(env, uid));
}

export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

let sequence = 0;

/** Replaces `file` with `content` atomically and durably (0600). */
export async function writeFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  const dir = dirname(file);
  await ensurePrivateDir(dir);
  const tmp = join(dir, `.${process.pid}.${++sequence}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
}

/** The file's text, or null when it does not exist. */
export async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
