import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Kysely, sql } from 'kysely';
import { readSchemaState } from '../migrate.ts';
import { insertOrder, readForeignKeys, readTables, sequenceNames } from './catalog.ts';
import { BackupError } from './errors.ts';
import { sealKey } from './key-envelope.ts';
import {
  FORMAT,
  FORMAT_VERSION,
  KEY_MISSING_WARNING,
  KEY_PART,
  MANIFEST,
  MANIFEST_SUM,
  type Manifest,
  type PartEntry,
  type TableEntry,
} from './manifest.ts';
import { TAR_END, tarHeader, tarPadding } from './tar.ts';

export interface WriteBackupOptions {
  /** Where the archive goes; written beside it as `<file>.partial` and renamed when complete. */
  file: string;
  appVersion: string;
  store: 'pglite' | 'postgres';
  /** Include the installation key, sealed with this passphrase (key-envelope.ts). */
  includeKey?: {
    key: Buffer;
    passphrase: string;
    /** The key check of a key (an HMAC): the key must be the one the database records, or the archive is not written. */
    keyCheck: (key: Buffer) => string;
  };
  now?: () => Date;
}

export interface BackupResult {
  file: string;
  bytes: number;
  manifest: Manifest;
}

const PAGE = 2000;

/**
 * A logical backup of the current schema: every table's rows as one JSON object per line
 * (PostgreSQL's own to_jsonb text, so a value comes back through jsonb_populate_recordset as
 * it was), all read in one REPEATABLE READ READ ONLY transaction: one consistent snapshot
 * while the installation keeps running. The same archive restores on PGlite and on
 * PostgreSQL. Parts are staged in a private temporary folder beside the archive (each row is
 * written once, its SHA-256 taken on the way), then packed with the manifest first.
 */
export async function writeBackup(db: Kysely<any>, opts: WriteBackupOptions): Promise<BackupResult> {
  const now = opts.now ?? (() => new Date());
  const stage = await mkdtemp(join(dirname(opts.file), `.${basename(opts.file)}.parts-`));
  const partial = `${opts.file}.partial`;
  try {
    const archiveId = randomUUID();
    const snapshot = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        await sql`set transaction read only`.execute(trx);
        const state = await readSchemaState(trx);
        if (state.unknown.length)
          throw new BackupError(
            `the database has migrations this build does not know (${state.unknown.join(', ')}): back it up with the svc version that migrated it`,
          );
        if (!state.applied.length) throw new BackupError('the database has no schema yet (never migrated): there is nothing to back up');
        const sequences = await sequenceNames(trx);
        if (sequences.length)
          throw new BackupError(`the schema has sequences (${sequences.join(', ')}), which this backup format does not carry`);
        const tables = await readTables(trx);
        const order = insertOrder([...tables.keys()], await readForeignKeys(trx));
        const keyCheck = tables.has('installation')
          ? ((await sql<{ key_check: string }>`select key_check from installation where id = 1`.execute(trx)).rows[0]?.key_check ?? null)
          : null;
        if (opts.includeKey && keyCheck !== null && opts.includeKey.keyCheck(opts.includeKey.key) !== keyCheck)
          throw new BackupError(
            'the installation key configured here is not the one this database was sealed with: an archive with it would not open its secrets',
          );
        const entries: TableEntry[] = [];
        const parts: PartEntry[] = [];
        for (const name of order) {
          const part = `tables/${name}.ndjson`;
          const written = await dumpTable(trx, name, join(stage, `${name}.ndjson`));
          entries.push({ name, columns: tables.get(name)?.columns ?? [], rows: written.rows, part });
          parts.push({ name: part, bytes: written.bytes, sha256: written.sha256 });
        }
        return { migrations: state.applied, keyCheck, entries, parts };
      });
    const parts = [...snapshot.parts];
    let keyBytes: Buffer | null = null;
    if (opts.includeKey) {
      keyBytes = Buffer.from(`${JSON.stringify(await sealKey(opts.includeKey.key, opts.includeKey.passphrase, archiveId))}\n`);
      parts.unshift({ name: KEY_PART, bytes: keyBytes.length, sha256: sha256(keyBytes) });
    }
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      archive_id: archiveId,
      created_at: now().toISOString(),
      app_version: opts.appVersion,
      store: opts.store,
      schema: { version: snapshot.migrations.at(-1) as string, migrations: snapshot.migrations },
      installation: {
        key_check: snapshot.keyCheck,
        key_included: keyBytes !== null,
        ...(keyBytes ? {} : { warning: KEY_MISSING_WARNING }),
      },
      tables: snapshot.entries,
      parts,
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const mtime = now();
    async function* archive(): AsyncGenerator<Buffer> {
      yield* entry(MANIFEST, manifestBytes, mtime);
      yield* entry(MANIFEST_SUM, Buffer.from(`${sha256(manifestBytes)}\n`), mtime);
      if (keyBytes) yield* entry(KEY_PART, keyBytes, mtime);
      for (const p of snapshot.parts) {
        yield tarHeader(p.name, p.bytes, mtime);
        const table = p.name.slice('tables/'.length);
        for await (const chunk of createReadStream(join(stage, table))) yield chunk as Buffer;
        yield tarPadding(p.bytes);
      }
      yield TAR_END;
    }
    await pipeline(archive, createGzip({ level: 6 }), createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
    const fh = await open(partial, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(partial, opts.file);
    return { file: opts.file, bytes: (await stat(opts.file)).size, manifest };
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

function* entry(name: string, bytes: Buffer, mtime: Date): Generator<Buffer> {
  yield tarHeader(name, bytes.length, mtime);
  yield bytes;
  yield tarPadding(bytes.length);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** One table's rows, page by page in physical order (ctid: stable within the snapshot). */
async function dumpTable(trx: Kysely<any>, table: string, path: string): Promise<{ rows: number; bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  const fh = await open(path, 'wx', 0o600);
  let rows = 0;
  let bytes = 0;
  try {
    let after = '(0,0)';
    for (;;) {
      const page = await sql<{ c: string; j: string }>`
        select t.ctid::text as c, to_jsonb(t)::text as j from ${sql.table(table)} as t
        where t.ctid > ${after}::tid order by t.ctid limit ${PAGE}`.execute(trx);
      if (!page.rows.length) break;
      const text = Buffer.from(`${page.rows.map((r) => r.j).join('\n')}\n`);
      hash.update(text);
      await fh.write(text);
      bytes += text.length;
      rows += page.rows.length;
      after = page.rows.at(-1)?.c as string;
      if (page.rows.length < PAGE) break;
    }
  } finally {
    await fh.close();
  }
  return { rows, bytes, sha256: hash.digest('hex') };
}
