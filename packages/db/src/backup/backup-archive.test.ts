import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPGlite } from '../connect.ts';
import { latestMigration, migrateThrough, migrateToLatest, readSchemaState } from '../migrate.ts';
import { PGLITE_EXTENSIONS } from '../pglite-extensions.ts';
import {
  ArchiveFormatError,
  NewerArchiveError,
  restoreBackup,
  TargetNotEmptyError,
  verifyArchive,
  WrongPassphraseError,
  writeBackup,
} from './index.ts';
import { TAR_END, tarHeader, tarPadding } from './tar.ts';

/**
 * The archive format on PGlite (the same code runs on PostgreSQL; the CLI's round trip over
 * the admin API covers both stores): what goes in comes back, and every damaged or foreign
 * archive is refused by verifyArchive before a database is opened for writing.
 */

let template: PGlite;
let blank: PGlite;
const dir = mkdtempSync(join(tmpdir(), 'svc-backup-'));
const KEY = Buffer.alloc(32, 7);
const KEY_CHECK = createHash('sha256').update('test').digest('hex');

async function fresh(): Promise<Kysely<any>> {
  return fromPGlite((await template.clone()) as PGlite).db;
}

async function empty(): Promise<Kysely<any>> {
  return fromPGlite((await blank.clone()) as PGlite).db;
}

/** Every row of every table, as PostgreSQL prints it, in a stable order. */
async function contents(db: Kysely<any>): Promise<Record<string, string[]>> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name <> 'kysely_migration_lock' order by 1`.execute(db);
  const out: Record<string, string[]> = {};
  for (const { name } of rows) {
    const r = await sql<{ j: string }>`select to_jsonb(t)::text as j from ${sql.table(name)} t`.execute(db);
    out[name] = r.rows.map((x) => x.j).sort();
  }
  return out;
}

async function seed(db: Kysely<any>): Promise<void> {
  await sql`insert into installation (id, key_check, created_at) values (1, ${KEY_CHECK}, '2026-11-25T10:00:00.123456Z')`.execute(db);
  await sql`insert into admins (id, email, password_hash, role, created_at, updated_at)
    values ('adm_1', 'o@example.com', 'hash "quoted" \\ and
newline', 'owner', '2026-11-25T10:00:00Z', '2026-11-25T10:00:00.5Z')`.execute(db);
  await sql`insert into signing_keys (kid, alg, public_jwk, private_key_enc, created_at)
    values ('k1', 'EdDSA', ${JSON.stringify({ kty: 'OKP', nested: { a: [1, 2.5, null, 'ü'] } })}::jsonb, 'v1.x.y.z', '2026-11-25T10:00:00Z')`.execute(
    db,
  );
}

let archive: string;

beforeAll(async () => {
  if (process.env.DATABASE_URL) return;
  blank = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  template = (await blank.clone()) as PGlite;
  await migrateToLatest(fromPGlite(template).db);
  const source = await fresh();
  await seed(source);
  archive = join(dir, 'full.tar.gz');
  await writeBackup(source, {
    file: archive,
    appVersion: '0.1.0',
    store: 'pglite',
    includeKey: { key: KEY, passphrase: 'correct horse battery', keyCheck: () => KEY_CHECK },
  });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The archive's entries, uncompressed: name -> bytes, in order. */
function unpack(file: string): Array<[string, Buffer]> {
  const tar = gunzipSync(readFileSync(file));
  const out: Array<[string, Buffer]> = [];
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const size = Number.parseInt(h.toString('ascii', 124, 135), 8);
    out.push([name, Buffer.from(tar.subarray(at + 512, at + 512 + size))]);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

function pack(file: string, entries: Array<[string, Buffer]>): string {
  const now = new Date();
  const blocks = entries.flatMap(([n, b]) => [tarHeader(n, b.length, now), b, tarPadding(b.length)]);
  writeFileSync(file, gzipSync(Buffer.concat([...blocks, TAR_END])));
  return file;
}

/** Re-packs with a changed manifest, its checksum made to match (as a forger would). */
function withManifest(name: string, change: (m: any) => void): string {
  const entries = unpack(archive);
  const m = JSON.parse((entries[0] as [string, Buffer])[1].toString());
  change(m);
  const bytes = Buffer.from(JSON.stringify(m));
  entries[0] = ['manifest.json', bytes];
  entries[1] = ['manifest.sha256', Buffer.from(`${createHash('sha256').update(bytes).digest('hex')}\n`)];
  return pack(join(dir, name), entries);
}

// Store-independent (the format, on PGlite): once per CI run, in the pass without DATABASE_URL.
// PostgreSQL's side of the same code runs in apps/cli/test/backup-restore.test.ts.
describe.skipIf(Boolean(process.env.DATABASE_URL))('backup archives', () => {
  it('a restore into an empty database brings back every row of every table as it was', async () => {
    const source = await fresh();
    await seed(source);
    const file = join(dir, 'roundtrip.tar.gz');
    const { manifest } = await writeBackup(source, { file, appVersion: '0.1.0', store: 'pglite' });
    expect(manifest.installation).toMatchObject({ key_check: KEY_CHECK, key_included: false });
    expect(manifest.installation.warning).toContain('does not contain the installation key');
    expect(manifest.schema.version).toBe(latestMigration());
    const target = await empty();
    const restored = await restoreBackup(target, await verifyArchive(file), { force: false });
    expect(restored.migrated).toEqual([]);
    expect(await contents(target)).toEqual(await contents(source));
    expect((await readSchemaState(target)).pending).toEqual([]);
  });

  it('an archive of an older schema is restored at that schema, then migrated forward', async () => {
    const all = Object.keys((await import('../migrations/index.ts')).migrations).sort();
    // Three behind, but never a schema of 2026-12-01T1000-limits or T1100: they held sequences,
    // which no archive carries (no archive of them can exist).
    const older = all[Math.max(all.indexOf('2026-12-01T1200-limits-without-sequences'), all.length - 4)] as string;
    const source = await empty();
    await migrateThrough(source, older);
    await sql`insert into installation (id, key_check, created_at) values (1, ${KEY_CHECK}, now())`.execute(source);
    const file = join(dir, 'older.tar.gz');
    const { manifest } = await writeBackup(source, { file, appVersion: '0.0.9', store: 'pglite' });
    expect(manifest.schema.version).toBe(older);
    const target = await empty();
    const restored = await restoreBackup(target, await verifyArchive(file), { force: false });
    expect(restored.migrated).toEqual(all.slice(all.indexOf(older) + 1));
    expect(restored.migrated.length).toBeGreaterThan(0);
    expect((await readSchemaState(target)).applied).toEqual(all);
    expect((await sql<{ k: string }>`select key_check as k from installation`.execute(target)).rows).toEqual([{ k: KEY_CHECK }]);
  });

  it('a restore into a database that holds anything is refused without force, and replaces it with force', async () => {
    const target = await fresh();
    await sql`insert into installation (id, key_check, created_at) values (1, ${'0'.repeat(64)}, now())`.execute(target);
    const before = await contents(target);
    const verified = await verifyArchive(archive);
    await expect(restoreBackup(target, verified, { force: false })).rejects.toBeInstanceOf(TargetNotEmptyError);
    expect(await contents(target)).toEqual(before);
    await restoreBackup(target, verified, { force: true });
    const source = await fresh();
    await seed(source);
    expect(await contents(target)).toEqual(await contents(source));
  });

  it('the installation key comes back only with the right passphrase', async () => {
    const verified = await verifyArchive(archive, { passphrase: 'correct horse battery' });
    expect(verified.key?.equals(KEY)).toBe(true);
    await expect(verifyArchive(archive, { passphrase: 'wrong horse battery' })).rejects.toBeInstanceOf(WrongPassphraseError);
  });

  it('a key that is not the one the database was sealed with is refused', async () => {
    await expect(verifyArchive(archive, { passphrase: 'correct horse battery', keyCheck: () => 'f'.repeat(64) })).rejects.toThrow(
      /not the key its database was sealed with/,
    );
  });

  it('a flipped byte anywhere in the file is refused', async () => {
    const bytes = readFileSync(archive);
    const plain = gunzipSync(bytes);
    /** A flip at `from` or just after that changes what the file holds (a few bits of a deflate stream, a code length no symbol uses, decode to the same bytes). */
    const damaging = (from: number) => {
      for (let at = from; ; at++) {
        const copy = Buffer.from(bytes);
        copy[at] = (copy[at] as number) ^ 0x01;
        try {
          if (!gunzipSync(copy).equals(plain)) return at;
        } catch {
          return at;
        }
      }
    };
    // Not the deflate stream's last byte: its padding bits change nothing.
    for (const at of [damaging(Math.floor(bytes.length / 3)), damaging(Math.floor(bytes.length / 2)), bytes.length - 6]) {
      const copy = Buffer.from(bytes);
      copy[at] = (copy[at] as number) ^ 0x01;
      const file = join(dir, `flipped-${at}.tar.gz`);
      writeFileSync(file, copy);
      await expect(verifyArchive(file, { passphrase: 'correct horse battery' })).rejects.toBeInstanceOf(ArchiveFormatError);
    }
  });

  it('the gzip trailer is checked and nothing may follow the end marker', async () => {
    const bytes = readFileSync(archive);
    // Each byte of the trailer's CRC-32 (the 8th to 5th last bytes): read to the end, gunzip checks it.
    for (let at = bytes.length - 8; at < bytes.length - 4; at++) {
      const copy = Buffer.from(bytes);
      copy[at] = (copy[at] as number) ^ 0x01;
      const file = join(dir, `crc-${at}.tar.gz`);
      writeFileSync(file, copy);
      await expect(verifyArchive(file, { passphrase: 'correct horse battery' })).rejects.toBeInstanceOf(ArchiveFormatError);
    }
    const tar = gunzipSync(bytes);
    for (const [name, tail] of [
      ['appended', Buffer.from('anything after the end')],
      ['zeros', Buffer.alloc(64 * 1024)],
    ] as const) {
      const file = join(dir, `after-end-${name}.tar.gz`);
      writeFileSync(file, gzipSync(Buffer.concat([tar, tail])));
      await expect(verifyArchive(file, { passphrase: 'correct horse battery' })).rejects.toThrow(/data after its end marker/);
    }
    // A writer's padding of the last record with zeros is not damage.
    const padded = join(dir, 'padded.tar.gz');
    writeFileSync(padded, gzipSync(Buffer.concat([tar, Buffer.alloc((10 * 1024 - (tar.length % (10 * 1024))) % (10 * 1024))])));
    await expect(verifyArchive(padded, { passphrase: 'correct horse battery' })).resolves.toMatchObject({ file: padded });
  });

  it('a part changed and re-packed is refused by its checksum', async () => {
    const entries = unpack(archive);
    const i = entries.findIndex(([n]) => n === 'tables/admins.ndjson');
    const [name, body] = entries[i] as [string, Buffer];
    entries[i] = [name, Buffer.from(body.toString().replace('owner', 'viewr'))];
    const file = pack(join(dir, 'altered.tar.gz'), entries);
    await expect(verifyArchive(file)).rejects.toThrow(/tables\/admins.ndjson does not match its checksum/);
  });

  it('a missing part, an unlisted part and a truncated archive are refused', async () => {
    const entries = unpack(archive);
    const missing = pack(
      join(dir, 'missing.tar.gz'),
      entries.filter(([n]) => n !== 'tables/signing_keys.ndjson'),
    );
    await expect(verifyArchive(missing)).rejects.toBeInstanceOf(ArchiveFormatError);
    const extra = pack(join(dir, 'extra.tar.gz'), [...entries, ['notes.txt', Buffer.from('hi')]]);
    await expect(verifyArchive(extra)).rejects.toThrow(/notes.txt, which its manifest does not list/);
    const whole = readFileSync(archive);
    writeFileSync(join(dir, 'cut.tar.gz'), whole.subarray(0, Math.floor(whole.length * 0.6)));
    await expect(verifyArchive(join(dir, 'cut.tar.gz'))).rejects.toBeInstanceOf(ArchiveFormatError);
  });

  it("an archive of a newer schema is refused, naming its version and this build's", async () => {
    const file = withManifest('newer.tar.gz', (m) => {
      m.schema.migrations.push('2099-01-01T0000-from-the-future');
      m.schema.version = '2099-01-01T0000-from-the-future';
      m.app_version = '9.0.0';
    });
    const err = await verifyArchive(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NewerArchiveError);
    expect((err as Error).message).toContain('2099-01-01T0000-from-the-future');
    expect((err as Error).message).toContain(latestMigration());
  });

  it('a manifest whose checksum does not match, or that is not ours, is refused', async () => {
    const entries = unpack(archive);
    const m = JSON.parse((entries[0] as [string, Buffer])[1].toString());
    m.tables[0].rows += 1;
    entries[0] = ['manifest.json', Buffer.from(JSON.stringify(m))];
    await expect(verifyArchive(pack(join(dir, 'sum.tar.gz'), entries))).rejects.toThrow(/does not match its checksum/);
    const evil = withManifest('evil.tar.gz', (x) => {
      x.tables[0].name = 'x"; drop table admins; --';
    });
    await expect(verifyArchive(evil)).rejects.toThrow(/manifest is invalid/);
    writeFileSync(join(dir, 'random.tar.gz'), randomBytes(4096));
    await expect(verifyArchive(join(dir, 'random.tar.gz'))).rejects.toBeInstanceOf(ArchiveFormatError);
  });
});
