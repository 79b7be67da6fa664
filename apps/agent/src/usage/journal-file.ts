/**
 * The journal's file, written so that a crash at any moment (kill -9, power loss) leaves a valid
 * prefix of frames: appends go to the end with one write and return only after fdatasync; a
 * failed append is cut back off before the error is thrown, so no later frame lands behind a
 * partial one; compaction writes the new content to a temporary file, fsyncs it, renames it over
 * the journal and fsyncs the directory, so the journal is either the old file or the new one.
 * Files are 0600 and the directory 0700: the journal names every subscription served here.
 */
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { decodeFrames, type Frame } from './frames.ts';

const JOURNAL = 'usage.journal';
const COMPACTING = 'usage.journal.compacting';

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
}

export class JournalFile {
  /** Set when a failed append could not be cut back off: later frames would be unreachable on replay, so none is written. */
  private broken: Error | undefined;

  private constructor(
    private readonly dir: string,
    private handle: FileHandle,
    /** Bytes of valid frames in the file: where the next frame starts. */
    public size: number,
  ) {}

  /** Opens (creating) the journal in `dir`; returns its whole frames and how many torn bytes were cut off. */
  static async open(dir: string): Promise<{ file: JournalFile; frames: Frame[]; droppedTailBytes: number }> {
    const created = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (created !== undefined) await fsyncDir(dirname(created));
    // A compaction that crashed before its rename left the old journal intact; its half-written copy is dropped.
    await rm(join(dir, COMPACTING), { force: true });
    const path = join(dir, JOURNAL);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const handle = await open(path, 'a', 0o600);
      await handle.sync();
      await fsyncDir(dir);
      return { file: new JournalFile(dir, handle, 0), frames: [], droppedTailBytes: 0 };
    }
    const { frames, validBytes } = decodeFrames(bytes);
    if (validBytes < bytes.length) {
      await truncate(path, validBytes);
    }
    const handle = await open(path, 'a', 0o600);
    if (validBytes < bytes.length) await handle.sync();
    return { file: new JournalFile(dir, handle, validBytes), frames, droppedTailBytes: bytes.length - validBytes };
  }

  /** Appends one encoded frame durably; on failure the file is cut back to its previous end. */
  async append(frame: Buffer): Promise<void> {
    if (this.broken) throw this.broken;
    try {
      await writeAll(this.handle, frame);
      await this.handle.datasync();
    } catch (err) {
      try {
        await this.handle.truncate(this.size);
        await this.handle.datasync();
      } catch (cut) {
        this.broken = new Error(`usage journal unusable: a failed append could not be cut off (${(cut as Error).message})`, { cause: err });
      }
      throw err;
    }
    this.size += frame.length;
  }

  /** Replaces the journal with `frames` (a snapshot) atomically and durably. */
  async replace(frames: Buffer[]): Promise<void> {
    const tmpPath = join(this.dir, COMPACTING);
    const tmp = await open(tmpPath, 'w', 0o600);
    let size = 0;
    try {
      for (const f of frames) {
        await writeAll(tmp, f);
        size += f.length;
      }
      await tmp.sync();
    } finally {
      await tmp.close();
    }
    const path = join(this.dir, JOURNAL);
    await rename(tmpPath, path);
    await fsyncDir(this.dir);
    const next = await open(path, 'a', 0o600);
    await this.handle.close();
    this.handle = next;
    this.size = size;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
