import { encodeVarint, VarintReader } from './wire-varint.ts';

/**
 * Entries of repeated message fields inserted into an encoded message, already encoded: the
 * bytes a generated encoder would have written had those entries been in the message. The
 * container is found by a path of (field number, occurrence) pairs from the top, each a
 * length-delimited field; the entries go before the container's first field with a higher
 * number (generated encoders write fields in field-number order), and the length prefix of
 * every message on the path is written anew. The rest of the message is copied as it is.
 *
 * For a DesiredState whose users were encoded ahead (packages/desired-state encode-desired-state.ts):
 * the config is encoded without them by the generated encoders, then they are spliced in.
 */
export interface RepeatedInsertion {
  /** (field number, occurrence among that field's entries) of each length-delimited field down to the container; [] for the message itself. */
  path: ReadonlyArray<readonly [field: number, occurrence: number]>;
  /** The repeated field the entries belong to (absent from the container as encoded). */
  field: number;
  /** Encoded entries, each with its tag and length prefix, in order. */
  chunks: readonly Uint8Array[];
}

interface Level {
  inserts: Map<number, Uint8Array[]>;
  children: Map<string, Level>;
}

const newLevel = (): Level => ({ inserts: new Map(), children: new Map() });

/** The message with the insertions made, as one buffer. Throws when a path is not in the message, or the message is not well-formed. */
export function spliceRepeated(message: Uint8Array, insertions: readonly RepeatedInsertion[]): Buffer {
  const root = newLevel();
  for (const ins of insertions) {
    let level = root;
    for (const [field, occurrence] of ins.path) {
      const key = `${field}:${occurrence}`;
      let child = level.children.get(key);
      if (!child) {
        child = newLevel();
        level.children.set(key, child);
      }
      level = child;
    }
    const list = level.inserts.get(ins.field) ?? [];
    list.push(...ins.chunks);
    level.inserts.set(ins.field, list);
  }
  const out: Uint8Array[] = [];
  rebuild(new VarintReader(message), message, 0, message.length, root, out);
  return Buffer.concat(out);
}

/** Writes the rebuilt message [start, end) to `out`; returns its length. */
function rebuild(v: VarintReader, buf: Uint8Array, start: number, end: number, level: Level, out: Uint8Array[]): number {
  const pending = [...level.inserts.keys()].sort((a, b) => a - b);
  const seen = new Map<number, number>();
  let found = 0;
  let length = 0;
  let copyFrom = start;
  const flush = (to: number) => {
    if (to > copyFrom) {
      out.push(buf.subarray(copyFrom, to));
      length += to - copyFrom;
    }
  };
  const insertUpTo = (field: number) => {
    while (pending.length && (pending[0] as number) < field) {
      for (const chunk of level.inserts.get(pending.shift() as number) as Uint8Array[]) {
        out.push(chunk);
        length += chunk.length;
      }
    }
  };
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const tag = v.read(pos, end);
    const afterTag = v.next;
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw new Error('field number 0');
    if (pending.length && (pending[0] as number) < field) {
      flush(fieldStart);
      copyFrom = fieldStart;
      insertUpTo(field);
    }
    if (wire === 0) {
      v.read(afterTag, end);
      pos = v.next;
    } else if (wire === 1) pos = afterTag + 8;
    else if (wire === 5) pos = afterTag + 4;
    else if (wire === 2) {
      const len = v.read(afterTag, end);
      const payload = v.next;
      pos = payload + len;
      if (pos > end) throw new Error('length past the end of the message');
      const occurrence = seen.get(field) ?? 0;
      seen.set(field, occurrence + 1);
      const child = level.children.get(`${field}:${occurrence}`);
      if (child) {
        found++;
        flush(fieldStart);
        const head = buf.subarray(fieldStart, afterTag);
        const inner: Uint8Array[] = [];
        const innerLength = rebuild(v, buf, payload, pos, child, inner);
        const prefix = encodeVarint(innerLength);
        out.push(head, prefix, ...inner);
        length += head.length + prefix.length + innerLength;
        copyFrom = pos;
      }
    } else throw new Error(`wire type ${wire} not supported`);
    if (pos > end) throw new Error('field past the end of the message');
  }
  flush(end);
  insertUpTo(Number.POSITIVE_INFINITY);
  if (found !== level.children.size) throw new Error('a path of the insertions is not in the message');
  return length;
}
