import { knownMigrations, latestMigration } from '../migrate.ts';
import { BackupError } from './errors.ts';
import { ArchiveFormatError } from './tar.ts';

/** The first entry of every archive; `manifest.sha256` (its SHA-256, hex) follows it. */
export const MANIFEST = 'manifest.json';
export const MANIFEST_SUM = 'manifest.sha256';
export const KEY_PART = 'installation-key.json';
export const FORMAT = 'svc-backup';
export const FORMAT_VERSION = 1;
/** Manifests are small; a larger one is not ours. */
export const MAX_MANIFEST_BYTES = 4 << 20;

export const KEY_MISSING_WARNING =
  "this archive does not contain the installation key: the sealed secrets in it (token signing key, agents' CA key, " +
  'subscription link tokens, provider credentials) can be decrypted only with the key of the installation it was taken ' +
  'from (SVC_INSTALLATION_KEY, SVC_INSTALLATION_KEY_FILE or <data_dir>/installation.key). Keep that key safe and apart, ' +
  'or take the backup with --include-key to put it in the archive sealed with a passphrase';

export interface TableEntry {
  name: string;
  columns: string[];
  rows: number;
  part: string;
}

export interface PartEntry {
  name: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  archive_id: string;
  created_at: string;
  app_version: string;
  store: 'pglite' | 'postgres';
  schema: {
    /** The last migration the database had: its schema version. */
    version: string;
    migrations: string[];
  };
  installation: {
    /** HMAC of a fixed label under the installation key (the `installation` row); null before the first start. */
    key_check: string | null;
    key_included: boolean;
    /** Set when the key is not included: what that means, in words. */
    warning?: string;
  };
  /** In the order they are restored (a table after the tables it references). */
  tables: TableEntry[];
  /** Every part after the manifest, in archive order, with its size and SHA-256. */
  parts: PartEntry[];
}

export class NewerArchiveError extends BackupError {}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
const HEX64 = /^[0-9a-f]{64}$/;

function fail(what: string): never {
  throw new ArchiveFormatError(`the archive's manifest is invalid: ${what}`);
}

function str(v: unknown, what: string, max = 200): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > max) fail(what);
  return v;
}

function count(v: unknown, what: string): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) fail(what);
  return v as number;
}

/** The manifest's text, checked field by field: an archive is input from outside. */
export function parseManifest(text: string): Manifest {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(text) as Record<string, unknown>;
  } catch {
    fail('not JSON');
  }
  if (!m || typeof m !== 'object') fail('not an object');
  if (m.format !== FORMAT) fail('not an svc backup');
  if (m.format_version !== FORMAT_VERSION)
    throw new NewerArchiveError(
      `the archive is in backup format ${String(m.format_version)}, this build reads format ${FORMAT_VERSION}: restore it with the svc version that wrote it (${String(m.app_version)}) or newer`,
    );
  const schema = m.schema as Record<string, unknown> | undefined;
  const migrations = schema?.migrations;
  if (!Array.isArray(migrations) || migrations.length === 0) fail('schema.migrations');
  for (const name of migrations) str(name, 'schema.migrations');
  const version = str(schema?.version, 'schema.version');
  if (migrations.at(-1) !== version) fail('schema.version is not the last of schema.migrations');
  const inst = m.installation as Record<string, unknown> | undefined;
  if (!inst || typeof inst.key_included !== 'boolean') fail('installation.key_included');
  if (inst.key_check !== null && !(typeof inst.key_check === 'string' && HEX64.test(inst.key_check))) fail('installation.key_check');
  if (m.store !== 'pglite' && m.store !== 'postgres') fail('store');
  const parts = m.parts;
  const tables = m.tables;
  if (!Array.isArray(parts) || !Array.isArray(tables)) fail('parts or tables');
  const partNames = new Set<string>();
  for (const p of parts as PartEntry[]) {
    const name = str(p?.name, 'parts.name', 99);
    if (!(name === KEY_PART || /^tables\/[a-z_][a-z0-9_]{0,62}\.ndjson$/.test(name)) || partNames.has(name)) fail(`part ${name}`);
    partNames.add(name);
    count(p.bytes, `parts ${name} bytes`);
    if (typeof p.sha256 !== 'string' || !HEX64.test(p.sha256)) fail(`parts ${name} sha256`);
  }
  if (partNames.has(KEY_PART) !== inst.key_included) fail('installation.key_included does not match the parts');
  const tableNames = new Set<string>();
  for (const t of tables as TableEntry[]) {
    const name = str(t?.name, 'tables.name', 63);
    if (!IDENT.test(name) || tableNames.has(name)) fail(`table ${name}`);
    tableNames.add(name);
    if (t.part !== `tables/${name}.ndjson` || !partNames.has(t.part)) fail(`table ${name} part`);
    if (!Array.isArray(t.columns) || t.columns.length === 0 || !t.columns.every((c) => typeof c === 'string' && IDENT.test(c)))
      fail(`table ${name} columns`);
    count(t.rows, `table ${name} rows`);
  }
  if (partNames.size !== tableNames.size + (inst.key_included ? 1 : 0)) fail('a part belongs to no table');
  str(m.archive_id, 'archive_id', 100);
  str(m.created_at, 'created_at', 40);
  str(m.app_version, 'app_version', 100);
  return m as unknown as Manifest;
}

/**
 * The archive's schema must be one this build knows, reached the way this build reaches it:
 * its migrations a prefix of ours. Anything else came from a newer (or another) build, and
 * restoring it would leave a database this build cannot read.
 */
export function checkArchiveSchema(manifest: Manifest): void {
  const known = knownMigrations();
  const ours = new Set(known);
  const unknown = manifest.schema.migrations.filter((m) => !ours.has(m));
  if (unknown.length)
    throw new NewerArchiveError(
      `the archive's schema ${manifest.schema.version} (svc ${manifest.app_version}) is newer than this build's ${latestMigration()}: ` +
        `it has migration${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} this build does not know. Restore it with svc ${manifest.app_version} or newer; nothing was changed`,
    );
  const prefix = known.slice(0, manifest.schema.migrations.length);
  if (prefix.join('\n') !== manifest.schema.migrations.join('\n'))
    throw new NewerArchiveError(
      `the archive's migrations (${manifest.schema.version}) are not the ones this build ran, in its order; nothing was changed`,
    );
}
