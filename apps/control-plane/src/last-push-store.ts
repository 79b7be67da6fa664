import { boundedFileDir } from './bounded-file-dir.ts';
import { type FileSeal, SEAL_OVERHEAD } from './file-seal.ts';

/**
 * The last DesiredState sent to each big node, encoded, kept on disk (`<data_dir>/last-push`)
 * across restarts, so the first push to a node whose revision has not moved since (an agent
 * reconnecting after the gateway restarted, or to another process over the same data dir)
 * sends those bytes instead of reading 100,000 members, compiling and encoding them again
 * (kept-source.ts decides what is kept and when it is used).
 *
 * A file per node: a 24-byte head (magic, format, revision, until when the content holds in
 * epoch ms), then the encoded ServerMessage sealed (file-seal.ts: AES-256-GCM under a key
 * derived from the installation key, the head and the node id authenticated with it: the
 * message carries inbound TLS keys and users' credentials, which the database keeps sealed). A
 * file is used only for exactly the revision asked, before its time, when it opens; writes go
 * through a temporary name and a rename, one at a time per node (a newer message waiting for
 * the write under way replaces any older one waiting). At most `maxBytes` are held
 * (bounded-file-dir.ts: the least recently written go first; a disk that fails is logged once
 * and reads as nothing kept).
 */
export interface LastPushStore {
  /** The message kept for the node at `revision`, if its content still holds at `nowMs`. */
  get(nodeId: string, revision: number, nowMs: number): Promise<Buffer | undefined>;
  put(nodeId: string, revision: number, untilMs: number, encoded: Uint8Array): void;
  stats(): { written: number; heldBytes: number };
  /** Waits for the writes under way. */
  flush(): Promise<void>;
}

const MAGIC = 0x50_4c_56_53; // "SVLP" read little-endian
const FORMAT = 2;
const HEAD = 24;

export function createLastPushStore(opts: {
  dir: string;
  maxBytes: number;
  seal: FileSeal;
  warn: (err: unknown, msg: string) => void;
}): LastPushStore {
  const files = boundedFileDir({ ...opts, ext: '.lpm', what: 'last pushes' });
  // Node ids are the database's, but a file name is made of nothing but [A-Za-z0-9_-].
  const nameOf = (nodeId: string) => Buffer.from(nodeId).toString('base64url');
  /** What the seal authenticates besides the bytes: the head and whose file it is. */
  const context = (head: Buffer, nodeId: string) => Buffer.concat([Buffer.from('last push\0'), head, Buffer.from(nodeId)]);
  /** Per node: null while a write runs, or the newest message waiting for it. */
  const writing = new Map<string, { revision: number; untilMs: number; encoded: Uint8Array } | null>();

  const write = (nodeId: string, m: { revision: number; untilMs: number; encoded: Uint8Array }) => {
    writing.set(nodeId, null);
    void (async () => {
      // Sealed on a later turn: the push these bytes are part of goes out first.
      await new Promise((r) => setImmediate(r));
      const head = Buffer.alloc(HEAD);
      head.writeUInt32LE(MAGIC, 0);
      head.writeUInt32LE(FORMAT, 4);
      head.writeBigUInt64LE(BigInt(m.revision), 8);
      head.writeDoubleLE(m.untilMs, 16);
      await files.write(nameOf(nodeId), [head, ...opts.seal.seal(context(head, nodeId), m.encoded)]);
    })()
      .catch((err) => opts.warn(err, 'a last push not kept'))
      .finally(() => {
        const next = writing.get(nodeId);
        writing.delete(nodeId);
        if (next) write(nodeId, next);
      });
  };

  return {
    async get(nodeId, revision, nowMs) {
      if (!Number.isSafeInteger(revision) || revision < 0) return undefined;
      const file = await files.read(nameOf(nodeId), HEAD, (head, size) =>
        head.readUInt32LE(0) === MAGIC &&
        head.readUInt32LE(4) === FORMAT &&
        head.readBigUInt64LE(8) === BigInt(revision) &&
        nowMs < head.readDoubleLE(16) &&
        size >= HEAD + SEAL_OVERHEAD
          ? size - HEAD
          : null,
      );
      return file ? opts.seal.open(context(file.head, nodeId), file.body) : undefined;
    },
    put(nodeId, revision, untilMs, encoded) {
      if (!Number.isSafeInteger(revision) || revision < 0) return;
      const m = { revision, untilMs, encoded };
      if (writing.has(nodeId)) writing.set(nodeId, m);
      else write(nodeId, m);
    },
    stats: () => files.stats(),
    async flush() {
      while (writing.size > 0) {
        await files.flush();
        await new Promise((r) => setImmediate(r));
      }
      await files.flush();
    },
  };
}
