import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { applyEnv, ConfigInputError, envNameOf } from './env.ts';
import { checkInvariants } from './invariants.ts';
import { type Config, configSchema } from './schema.ts';

/** Raised when the installation must not start; `message` is what the operator reads. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function readFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`config file ${path}: ${(err as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError([`config file ${path}: ${(err as Error).message}`]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError([`config file ${path}: expected a mapping at the top level`]);
  return parsed as Record<string, unknown>;
}

function valueAt(tree: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = tree;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

const hasPassword = (url: unknown): boolean => {
  try {
    return typeof url === 'string' && new URL(url).password !== '';
  } catch {
    return false;
  }
};

function secretsInFile(tree: Record<string, unknown>): string[] {
  const found: string[] = [];
  if (tree.installation_key !== undefined) found.push('installation_key');
  const mail = tree.mail as Record<string, unknown> | undefined;
  if (mail?.smtp_url !== undefined) found.push('mail.smtp_url');
  if ((tree.metrics as Record<string, unknown> | undefined)?.token !== undefined) found.push('metrics.token');
  if (hasPassword((tree.database as Record<string, unknown> | undefined)?.url)) found.push('database.url (it carries a password)');
  if (hasPassword((tree.redis as Record<string, unknown> | undefined)?.url)) found.push('redis.url (it carries a password)');
  for (const section of ['auth', 'portal_auth']) {
    const oauth = (tree[section] as Record<string, unknown> | undefined)?.oauth as Record<string, Record<string, unknown>> | undefined;
    for (const [name, p] of Object.entries(oauth ?? {})) {
      if (p && typeof p === 'object' && 'client_secret' in p) found.push(`${section}.oauth.${name}.client_secret`);
    }
  }
  return found.map((k) => `${k} is a secret and is accepted only from the environment, not from the config file`);
}

/**
 * Builds the one typed config object: file (SVC_CONFIG_FILE), then environment, then the
 * schema's defaults; refuses (ConfigError) on any invalid value or broken startup invariant.
 */
export function loadConfig(env: Record<string, string | undefined> = {}, overrides: Record<string, unknown> = {}): Config {
  const file = env.SVC_CONFIG_FILE ? readFile(env.SVC_CONFIG_FILE) : {};
  const problems = secretsInFile(file);
  if (problems.length) throw new ConfigError(problems);
  let tree: Record<string, unknown>;
  try {
    tree = applyEnv(structuredClone(file), env);
  } catch (err) {
    if (err instanceof ConfigInputError) throw new ConfigError([err.message]);
    throw err;
  }
  const merged = deepMerge(tree, overrides);
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const path = i.path.join('.') || '(root)';
        const env = envNameOf(path);
        const given = valueAt(merged, i.path);
        const shown = given === undefined ? '' : ` (got ${JSON.stringify(given)})`;
        return `${env ? `${env} (${path})` : path}: ${i.message}${shown}`;
      }),
    );
  }
  const broken = checkInvariants(result.data);
  if (broken.length) throw new ConfigError(broken);
  return result.data;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && prev && typeof prev === 'object' && !Array.isArray(prev)
        ? deepMerge(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
