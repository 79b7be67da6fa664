import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { type KeyEnvelope, openKey, parseKeyEnvelope } from './key-envelope.ts';
import { checkArchiveSchema, KEY_PART, MANIFEST, MANIFEST_SUM, MAX_MANIFEST_BYTES, type Manifest, parseManifest } from './manifest.ts';
import { ArchiveFormatError, readTar, type TarEntry } from './tar.ts';

/** The entries of an archive file after gunzip; a damaged gzip stream is an ArchiveFormatError. */
export async function* archiveEntries(file: string): AsyncGenerator<TarEntry> {
  const gunzip = createGunzip();
  const source = createReadStream(file);
  source.on('error', (err) => gunzip.destroy(err));
  source.pipe(gunzip);
  try {
    yield* readTar(gunzip);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ArchiveFormatError(`${file}: no such file`);
    throw err;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

async function readAll(entry: TarEntry, max: number): Promise<Buffer> {
  if (entry.size > max) throw new ArchiveFormatError(`the archive's ${entry.name} is larger than ${max} bytes`);
  const chunks: Buffer[] = [];
  for await (const c of entry.body) chunks.push(c);
  return Buffer.concat(chunks);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The manifest and its checksum, the first two entries of every archive. */
async function readHead(entries: AsyncGenerator<TarEntry>): Promise<Manifest> {
  const first = await entries.next();
  if (first.done || first.value.name !== MANIFEST)
    throw new ArchiveFormatError(`not an svc backup archive: it does not start with ${MANIFEST}`);
  const manifestBytes = await readAll(first.value, MAX_MANIFEST_BYTES);
  const second = await entries.next();
  if (second.done || second.value.name !== MANIFEST_SUM)
    throw new ArchiveFormatError(`the archive has no ${MANIFEST_SUM} after its manifest`);
  const sum = (await readAll(second.value, 200)).toString('ascii').trim();
  if (sum !== sha256(manifestBytes))
    throw new ArchiveFormatError("the archive's manifest does not match its checksum (the archive was altered or damaged)");
  return parseManifest(manifestBytes.toString('utf8'));
}

/** Only the manifest (quick): what an archive claims to be, before it is checked. */
export async function readManifest(file: string): Promise<Manifest> {
  const entries = archiveEntries(file);
  try {
    return await readHead(entries);
  } finally {
    await entries.return(undefined);
  }
}

export interface VerifiedArchive {
  file: string;
  manifest: Manifest;
  /** The installation key, when the archive has it and the passphrase was given. */
  key: Buffer | null;
}

export interface VerifyOptions {
  /** Opens the sealed installation key (when the archive has one). */
  passphrase?: string | undefined;
  /** The key check (an HMAC) of a key: the opened key must match the archive's `installation.key_check`. */
  keyCheck?: (key: Buffer) => string;
}

/**
 * Reads the whole archive once and checks everything a restore relies on, touching no
 * database: the manifest and its checksum, the format and schema versions (a schema this
 * build does not know is refused, naming both), every part present, in order, of its size and
 * SHA-256, nothing else in the archive, every row a JSON object of the table's columns and
 * the row counts, and the sealed installation key opened with the passphrase.
 */
export async function verifyArchive(file: string, opts: VerifyOptions = {}): Promise<VerifiedArchive> {
  const entries = archiveEntries(file);
  try {
    const manifest = await readHead(entries);
    checkArchiveSchema(manifest);
    const tables = new Map(manifest.tables.map((t) => [t.part, t]));
    let envelope: KeyEnvelope | null = null;
    for (const part of manifest.parts) {
      const next = await entries.next();
      if (next.done) throw new ArchiveFormatError(`the archive is missing ${part.name}`);
      const entry = next.value;
      if (entry.name !== part.name) throw new ArchiveFormatError(`the archive has ${entry.name} where its manifest lists ${part.name}`);
      if (entry.size !== part.bytes) throw new ArchiveFormatError(`${part.name} is ${entry.size} bytes, the manifest says ${part.bytes}`);
      if (part.name === KEY_PART) {
        const bytes = await readAll(entry, 64 << 10);
        if (sha256(bytes) !== part.sha256) throw new ArchiveFormatError(`${part.name} does not match its checksum`);
        try {
          envelope = parseKeyEnvelope(JSON.parse(bytes.toString('utf8')));
        } catch {
          throw new ArchiveFormatError("the archive's sealed installation key is malformed");
        }
        continue;
      }
      const table = tables.get(part.name);
      if (!table) throw new ArchiveFormatError(`${part.name} belongs to no table of the manifest`);
      const columns = new Set(table.columns);
      const hash = createHash('sha256');
      let rows = 0;
      for await (const line of lines(entry, hash)) {
        let row: unknown;
        try {
          row = JSON.parse(line);
        } catch {
          throw new ArchiveFormatError(`${part.name} row ${rows + 1} is not JSON`);
        }
        if (!row || typeof row !== 'object' || Array.isArray(row))
          throw new ArchiveFormatError(`${part.name} row ${rows + 1} is not an object`);
        for (const k of Object.keys(row))
          if (!columns.has(k)) throw new ArchiveFormatError(`${part.name} row ${rows + 1} has a column ${k} the manifest does not list`);
        rows++;
      }
      if (hash.digest('hex') !== part.sha256)
        throw new ArchiveFormatError(`${part.name} does not match its checksum (the archive was altered or damaged)`);
      if (rows !== table.rows) throw new ArchiveFormatError(`${part.name} has ${rows} rows, the manifest says ${table.rows}`);
    }
    const extra = await entries.next();
    if (!extra.done) throw new ArchiveFormatError(`the archive holds ${extra.value.name}, which its manifest does not list`);
    let key: Buffer | null = null;
    if (envelope && opts.passphrase !== undefined) {
      key = await openKey(envelope, opts.passphrase, manifest.archive_id);
      if (opts.keyCheck && manifest.installation.key_check !== null && opts.keyCheck(key) !== manifest.installation.key_check)
        throw new ArchiveFormatError('the installation key in the archive is not the key its database was sealed with');
    }
    return { file, manifest, key };
  } finally {
    await entries.return(undefined);
  }
}

/** The lines of a part (each row one line, the part ending with a newline), hashed as they pass. */
export async function* lines(entry: TarEntry, hash: ReturnType<typeof createHash>): AsyncGenerator<string> {
  let rest = '';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of entry.body) {
    hash.update(chunk);
    let text: string;
    try {
      text = rest + decoder.decode(chunk, { stream: true });
    } catch {
      throw new ArchiveFormatError(`${entry.name} is not UTF-8 text`);
    }
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) {
      if (p === '') throw new ArchiveFormatError(`${entry.name} has an empty line`);
      yield p;
    }
  }
  if (rest !== '') throw new ArchiveFormatError(`${entry.name} does not end with a newline (truncated)`);
}
