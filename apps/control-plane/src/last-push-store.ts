import { boundedFileDir } from './bounded-file-dir.ts';
import { type FileSeal, SEAL_OVERHEAD } from './file-seal.ts';

/**
 * The last DesiredState sent to each big node, encoded, kept on disk (`<data_dir>/last-push`)
 * across restarts, so the first push to a node whose revision has not moved since (an agent
 * reconnecting after the gateway restarted, or to another process over the same data dir)
 * sends those bytes instead of reading 100,000 members, compiling and encoding them again
 * (kept-source.ts decides what is kept and when it is used).
 *
 * A file per node: a 32-byte head (magic, format, revision, until when the content holds in
 * epoch ms, the gzip level of the second part or 0, the first part's length), then the encoded
 * ServerMessage sealed, and its gzip as the send made it, sealed too, when it came before the
 * write (file-seal.ts: AES-256-GCM under a key derived from the installation key, the head and
 * the node id authenticated with it: the message carries inbound TLS keys and users'
 * credentials, which the database keeps sealed). A file is used only for exactly the revision asked, before its time, when it opens. A node's
 * newest message is written once it has not changed for quietMs (or has waited maxWaitMs: a big
 * node changing all the time is not 19 MiB of disk writes a change), through a temporary name and
 * a rename, one write at a time per node; flush() writes what waits at once (a stopping
 * gateway). At most `maxBytes` are held (bounded-file-dir.ts: the least recently written go
 * first; a disk that fails is logged once and reads as nothing kept).
 */
export interface LastPushStore {
  /** The message kept for the node at `revision`, if its content still holds at `nowMs`, and its gzip when that was kept too. */
  get(nodeId: string, revision: number, nowMs: number): Promise<{ bytes: Buffer; gzip?: { level: number; bytes: Buffer } } | undefined>;
  put(nodeId: string, revision: number, untilMs: number, encoded: Uint8Array): void;
  /** The gzip of the message put for `revision` (what the send made of it), kept with it when it has not been written yet. */
  putGzip(nodeId: string, revision: number, level: number, gzipped: Uint8Array | readonly Uint8Array[]): void;
  stats(): { written: number; heldBytes: number };
  /** Writes what waits and waits for the writes under way. */
  flush(): Promise<void>;
}

const MAGIC = 0x50_4c_56_53; // "SVLP" read little-endian
const FORMAT = 3;
const HEAD = 32;

export function createLastPushStore(opts: {
  dir: string;
  maxBytes: number;
  seal: FileSeal;
  warn: (err: unknown, msg: string) => void;
  /** A node's newest message is written once it has not changed for this long (default 10 s)… */
  quietMs?: number;
  /** …or once it has waited this long (default 60 s): a node that changes all the time is written once a minute, not 19 MiB a change. */
  maxWaitMs?: number;
}): LastPushStore {
  const files = boundedFileDir({ ...opts, ext: '.lpm', what: 'last pushes' });
  const quietMs = opts.quietMs ?? 10_000;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  // Node ids are the database's, but a file name is made of nothing but [A-Za-z0-9_-].
  const nameOf = (nodeId: string) => Buffer.from(nodeId).toString('base64url');
  /** What the seal authenticates besides the bytes: which part, the head and whose file it is. */
  const context = (part: 'last push' | 'last push gzip', head: Buffer, nodeId: string) =>
    Buffer.concat([Buffer.from(`${part}\0`), head, Buffer.from(nodeId)]);
  type Kept = {
    revision: number;
    untilMs: number;
    encoded: Uint8Array;
    gzip?: { level: number; bytes: Uint8Array | readonly Uint8Array[] };
  };
  /** Per node: the newest message not written yet, since when one has waited, and whether its time came. */
  const waiting = new Map<string, { m: Kept; since: number; due: boolean; timer: NodeJS.Timeout }>();
  /** Per node, the write under way (one at a time). */
  const running = new Map<string, Promise<void>>();

  const writeDue = (nodeId: string): void => {
    const w = waiting.get(nodeId);
    // A write under way: this one goes when it ends.
    if (!w?.due || running.has(nodeId)) return;
    waiting.delete(nodeId);
    clearTimeout(w.timer);
    const { m } = w;
    const write = (async () => {
      // Sealed on a later turn than the put: whatever the caller does next goes first.
      await new Promise((r) => setImmediate(r));
      const head = Buffer.alloc(HEAD);
      head.writeUInt32LE(MAGIC, 0);
      head.writeUInt32LE(FORMAT, 4);
      head.writeBigUInt64LE(BigInt(m.revision), 8);
      head.writeDoubleLE(m.untilMs, 16);
      head.writeUInt32LE(m.gzip?.level ?? 0, 24);
      head.writeUInt32LE(m.encoded.length + SEAL_OVERHEAD, 28);
      const parts = opts.seal.seal(context('last push', head, nodeId), m.encoded);
      if (m.gzip) parts.push(...opts.seal.seal(context('last push gzip', head, nodeId), m.gzip.bytes));
      await files.write(nameOf(nodeId), [head, ...parts]);
    })()
      .catch((err) => opts.warn(err, 'a last push not kept'))
      .finally(() => {
        running.delete(nodeId);
        writeDue(nodeId);
      });
    running.set(nodeId, write);
  };

  return {
    async get(nodeId, revision, nowMs) {
      if (!Number.isSafeInteger(revision) || revision < 0) return undefined;
      const file = await files.read(nameOf(nodeId), HEAD, (head, size) => {
        const [level, rawLength] = [head.readUInt32LE(24), head.readUInt32LE(28)];
        const fits = level > 0 ? size >= HEAD + rawLength + SEAL_OVERHEAD : size === HEAD + rawLength;
        const ours = head.readUInt32LE(0) === MAGIC && head.readUInt32LE(4) === FORMAT;
        const current = head.readBigUInt64LE(8) === BigInt(revision) && nowMs < head.readDoubleLE(16);
        return ours && current && rawLength >= SEAL_OVERHEAD && fits ? size - HEAD : null;
      });
      if (!file) return undefined;
      const [level, rawLength] = [file.head.readUInt32LE(24), file.head.readUInt32LE(28)];
      const bytes = opts.seal.open(context('last push', file.head, nodeId), file.body.subarray(0, rawLength));
      if (!bytes) return undefined;
      if (level === 0) return { bytes };
      const gzipped = opts.seal.open(context('last push gzip', file.head, nodeId), file.body.subarray(rawLength));
      // A gzip that does not open is left out: the send deflates again.
      return gzipped ? { bytes, gzip: { level, bytes: gzipped } } : { bytes };
    },
    put(nodeId, revision, untilMs, encoded) {
      if (!Number.isSafeInteger(revision) || revision < 0) return;
      const now = Date.now();
      const before = waiting.get(nodeId);
      if (before) clearTimeout(before.timer);
      const since = before?.since ?? now;
      const entry = { m: { revision, untilMs, encoded }, since, due: false, timer: undefined as unknown as NodeJS.Timeout };
      entry.timer = setTimeout(
        () => {
          entry.due = true;
          writeDue(nodeId);
        },
        Math.max(0, Math.min(quietMs, since + maxWaitMs - now)),
      );
      entry.timer.unref();
      waiting.set(nodeId, entry);
    },
    putGzip(nodeId, revision, level, gzipped) {
      const w = waiting.get(nodeId);
      if (w && w.m.revision === revision && level > 0) w.m.gzip = { level, bytes: gzipped };
    },
    stats: () => files.stats(),
    async flush() {
      // What waits is written now (a stopping gateway leaves its successor the newest).
      for (const [nodeId, w] of waiting) {
        w.due = true;
        writeDue(nodeId);
      }
      while (running.size > 0) await Promise.all([...running.values()]);
      await files.flush();
    },
  };
}
