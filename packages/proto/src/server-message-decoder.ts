import { FlatReader } from './flat-reader.ts';
import {
  InboundUser,
  type ServerMessage,
  ServerMessage as ServerMessageCodec,
  UserLimits,
} from './gen/svc/controlplane/v1/controlplane.ts';
import { encodeVarint, VarintReader, WireFormatError } from './wire-varint.ts';

/**
 * The agent's decoder of Sync's ServerMessages: the generated decoders over FlatReader, except
 * that a big DesiredState's members (every inbound's users, the node's user limits) are taken
 * from the DesiredState before it where their bytes are the same.
 *
 * Every push is the whole DesiredState (spec: a revisioned snapshot), and a one-user change of a
 * 100,000-user node sends 100,000 users again: decoding them all took the agent ~85 ms of the
 * ~380 a change takes to reach it (bench/BENCHMARKS.md, desired state big-node). Here the
 * message is walked once (tags and lengths, no decoding) down to those entries; the rest (the
 * "skeleton": the message without them, lengths rewritten) goes through the generated decoder;
 * each entry whose bytes equal the entry at its place in the message before hands back that
 * entry's decoded object, found by two binary searches over byte ranges (the unchanged head and
 * tail of each list) and a walk over what lies between; only the others are decoded.
 *
 * Equal bytes decode to equal objects, so a well-formed message decodes to exactly what
 * `decodeFlat(ServerMessage, bytes)` gives (server-message-decoder.test.ts). Unchanged members are
 * the same objects from one message to the next: whoever holds decoded messages treats them as
 * read-only (the agent does). A message that is not well-formed (a field past its message's end,
 * an entry whose fields run past it, a message on the path given twice) is decoded by the
 * generated decoders whole, as before, and nothing of it is kept. (One broken inside another
 * sub-message, which the generated decoders read on past its end into whatever follows, could
 * read on into other bytes here; none of the cut and flipped messages of the tests does.)
 *
 * Kept between messages: the last DesiredState's bytes as given (grpc-js hands every message in a
 * buffer of its own, never reused) and its members' offsets and objects, from `minBytes` (1 MiB:
 * a node of a few thousand users) up; smaller messages are decoded whole.
 */
export class ServerMessageDecoder {
  private kept: Kept | undefined;
  /** Lists of a message that went, reused for the next one (a 300,000-entry list is megabytes: new memory is not free). */
  private readonly spare: List[] = [];
  private readonly take = (): List => {
    const l = this.spare.pop() ?? new List();
    l.n = 0;
    return l;
  };
  /** What the last message cost: members taken from the message before, and decoded. */
  readonly last = { reused: 0, decoded: 0 };

  constructor(private readonly minBytes = 1 << 20) {}

  decode(bytes: Uint8Array): ServerMessage {
    this.last.reused = 0;
    this.last.decoded = 0;
    if (bytes.length >= this.minBytes) {
      let walked: Walked | undefined;
      try {
        walked = walk(bytes, this.take);
      } catch (err) {
        if (!(err instanceof WireFormatError)) throw err;
      }
      if (walked) {
        const m = this.fill(bytes, walked);
        if (m) return m;
        this.release(walked.users, walked.limits);
      }
    }
    const m = ServerMessageCodec.decode(new FlatReader(bytes));
    if (m.desiredState) this.forget();
    return m;
  }

  private forget(): void {
    if (this.kept) this.release(this.kept.users, this.kept.limits);
    this.kept = undefined;
  }

  private release(users: List[], limits: List): void {
    for (const l of [...users, limits]) {
      l.objs.length = 0;
      this.spare.push(l);
    }
  }

  /** The message from its skeleton and its members; undefined when it is not well-formed (or not a DesiredState). */
  private fill(bytes: Uint8Array, walked: Walked): ServerMessage | undefined {
    if (!walked.desiredState) return undefined;
    let m: ServerMessage;
    try {
      m = ServerMessageCodec.decode(new FlatReader(walked.skeleton));
    } catch {
      return undefined;
    }
    const config = m.desiredState?.config;
    const inbounds = config?.xray?.inbounds ?? [];
    if (!config || inbounds.length !== walked.users.length) {
      this.forget();
      return undefined;
    }
    const reader = new FlatReader(bytes);
    const prev = this.kept;
    try {
      for (let i = 0; i < inbounds.length; i++) {
        const list = walked.users[i] as List<InboundUser>;
        members(bytes, list, prev?.buf, prev?.users[i], reader, InboundUser, this.last);
        (inbounds[i] as { users: InboundUser[] }).users = list.objs.slice();
      }
      const limits = walked.limits as List<UserLimits>;
      members(bytes, limits, prev?.buf, prev?.limits, reader, UserLimits, this.last);
      config.userLimits = limits.objs.slice();
    } catch (err) {
      if (!(err instanceof WireFormatError)) throw err;
      this.forget();
      return undefined;
    }
    this.forget();
    this.kept = { buf: bytes, users: walked.users as List<InboundUser>[], limits: walked.limits as List<UserLimits> };
    return m;
  }
}

/**
 * A repeated field's entries: [starts[i], ends[i]) is entry i with its tag and length, its
 * message from payloads[i]; objs[i] its decoded message once filled. Reused from message to message.
 */
class List<T = unknown> {
  n = 0;
  starts = new Int32Array(256);
  ends = new Int32Array(256);
  payloads = new Int32Array(256);
  objs: T[] = [];

  push(start: number, end: number, payload: number): void {
    if (this.n === this.starts.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
      this.payloads = grow(this.payloads);
    }
    const k = this.n++;
    this.starts[k] = start;
    this.ends[k] = end;
    this.payloads[k] = payload;
  }
}

interface Kept {
  buf: Uint8Array;
  users: List<InboundUser>[];
  limits: List<UserLimits>;
}

interface Walked {
  skeleton: Uint8Array;
  /** Whether a desired_state was found (it, its config and the config's xray are each there once at most). */
  desiredState: boolean;
  /** Each inbound's users, in the order of the inbounds. */
  users: List[];
  limits: List;
}

interface Decoder<T> {
  decode(reader: FlatReader, length: number): T;
}

/**
 * The entries of one list, each the object of the previous list's entry with the same bytes at
 * its place, or decoded. The head is the longest run of entries laid out alike in both lists
 * (same lengths, each right after the one before) whose bytes are equal, found by a binary search
 * over one byte-range comparison each; the tail likewise from the end; between them, a walk that
 * steps over one inserted or one removed entry and decodes what it cannot match.
 */
function members<T>(
  buf: Uint8Array,
  now: List<T>,
  prevBuf: Uint8Array | undefined,
  prev: List<T> | undefined,
  reader: FlatReader,
  codec: Decoder<T>,
  count: { reused: number; decoded: number },
): void {
  const n = now.n;
  const objs = now.objs;
  objs.length = n;
  let decoded = 0;
  const decode = (i: number): T => {
    const start = now.payloads[i] as number;
    const end = now.ends[i] as number;
    reader.pos = start;
    const obj = codec.decode(reader, end - start);
    if (reader.pos !== end) throw new WireFormatError('an entry read past its end');
    count.decoded++;
    decoded++;
    return obj;
  };
  if (!prev || !prevBuf) {
    for (let i = 0; i < n; i++) objs[i] = decode(i);
    return;
  }
  const p = prev.n;
  const nb = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const pb = Buffer.from(prevBuf.buffer, prevBuf.byteOffset, prevBuf.byteLength);
  const same = (i: number, j: number) => {
    const ns = now.starts[i] as number;
    const ne = now.ends[i] as number;
    const ps = prev.starts[j] as number;
    const pe = prev.ends[j] as number;
    return ne - ns === pe - ps && nb.compare(pb, ps, pe, ns, ne) === 0;
  };

  // The head: entries 0..k-1 alike in layout, then the longest prefix of them with equal bytes.
  let aligned = 0;
  const limit = Math.min(n, p);
  while (aligned < limit && alike(now, prev, aligned, aligned, aligned > 0 ? -1 : 0)) aligned++;
  const head = longest(
    aligned,
    (k) => nb.compare(pb, prev.starts[0] as number, prev.ends[k - 1] as number, now.starts[0] as number, now.ends[k - 1] as number) === 0,
  );
  for (let i = 0; i < head; i++) objs[i] = prev.objs[i] as T;

  // The tail, from the end, not reaching into the head.
  let tailAligned = 0;
  const tailLimit = Math.min(n, p) - head;
  while (tailAligned < tailLimit && alike(now, prev, n - 1 - tailAligned, p - 1 - tailAligned, tailAligned > 0 ? 1 : 0)) tailAligned++;
  const tail = longest(
    tailAligned,
    (k) =>
      nb.compare(pb, prev.starts[p - k] as number, prev.ends[p - 1] as number, now.starts[n - k] as number, now.ends[n - 1] as number) ===
      0,
  );
  for (let k = 1; k <= tail; k++) objs[n - k] = prev.objs[p - k] as T;

  // Between: one entry changed, one inserted, one removed, or a walk that lost its way (decoded).
  let i = head;
  let j = head;
  const iEnd = n - tail;
  const jEnd = p - tail;
  while (i < iEnd) {
    if (j < jEnd && same(i, j)) {
      objs[i++] = prev.objs[j++] as T;
    } else if (j + 1 < jEnd && same(i, j + 1)) {
      objs[i++] = prev.objs[j + 1] as T;
      j += 2;
    } else {
      objs[i] = decode(i);
      if (j < jEnd && i + 1 < iEnd && !same(i + 1, j)) j++;
      i++;
    }
  }
  count.reused += n - decoded;
}

/** Whether entry i of `a` and entry j of `b` have the same length and, with `dir`, sit right after (-1) or before (+1) their neighbour alike. */
function alike(a: List, b: List, i: number, j: number, dir: -1 | 0 | 1): boolean {
  const ai = (a.ends[i] as number) - (a.starts[i] as number);
  if (ai !== (b.ends[j] as number) - (b.starts[j] as number)) return false;
  if ((a.payloads[i] as number) - (a.starts[i] as number) !== (b.payloads[j] as number) - (b.starts[j] as number)) return false;
  if (dir === -1) return a.starts[i] === a.ends[i - 1] && b.starts[j] === b.ends[j - 1];
  if (dir === 1) return a.ends[i] === a.starts[i + 1] && b.ends[j] === b.starts[j + 1];
  return true;
}

/** The largest k in [0, max] with equal(k) (equal(0) is taken as true; equal is monotone). */
function longest(max: number, equal: (k: number) => boolean): number {
  if (max === 0) return 0;
  if (equal(max)) return max;
  let lo = 0;
  let hi = max;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (equal(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Field numbers (proto/svc/controlplane/v1/controlplane.proto; fixed by the spec).
const SERVER_DESIRED_STATE = 1;
const DESIRED_CONFIG = 2;
const CONFIG_XRAY = 1;
const CONFIG_USER_LIMITS = 11;
const XRAY_INBOUNDS = 1;
const INBOUND_USERS = 7;

type Level = 'server' | 'desired' | 'config' | 'xray' | 'inbound';

/** The message's members' offsets and its skeleton (the message without them); throws WireFormatError. */
function walk(buf: Uint8Array, take: () => List): Walked {
  const w: Walked = { skeleton: new Uint8Array(0), desiredState: false, users: [], limits: take() };
  const out: Uint8Array[] = [];
  strip(new VarintReader(buf), buf, 0, buf.length, 'server', w, out, undefined, take);
  w.skeleton = Buffer.concat(out);
  return w;
}

/** Writes [start, end) of a message at this level without its members to `out`; returns the length written. */
function strip(
  v: VarintReader,
  buf: Uint8Array,
  start: number,
  end: number,
  level: Level,
  w: Walked,
  out: Uint8Array[],
  users: List | undefined,
  take: () => List,
): number {
  let length = 0;
  let copyFrom = start;
  let once = 0;
  const flush = (to: number) => {
    if (to > copyFrom) {
      out.push(buf.subarray(copyFrom, to));
      length += to - copyFrom;
    }
  };
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const tag = v.read(pos, end);
    pos = v.next;
    const afterTag = pos;
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw new WireFormatError('field number 0');
    if (wire === 0) {
      v.read(pos, end);
      pos = v.next;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const len = v.read(pos, end);
      const payload = v.next;
      pos = payload + len;
      if (pos > end) throw new WireFormatError('a field past the end of its message');
      const child = childOf(level, field);
      if (child === 'entry') {
        flush(fieldStart);
        const list = level === 'inbound' ? (users as List) : w.limits;
        list.push(fieldStart, pos, payload);
        if (afterTag - fieldStart === 1) pos = entriesAfter(buf, pos, end, buf[fieldStart] as number, list);
        copyFrom = pos;
      } else if (child) {
        if (child !== 'inbound') {
          if (once & (1 << field)) throw new WireFormatError('a message on the path given twice');
          once |= 1 << field;
        }
        if (child === 'desired') w.desiredState = true;
        let inner = users;
        if (child === 'inbound') {
          inner = take();
          w.users.push(inner);
        }
        flush(fieldStart);
        const head = buf.subarray(fieldStart, afterTag);
        const parts: Uint8Array[] = [];
        const innerLength = strip(v, buf, payload, pos, child, w, parts, inner, take);
        const prefix = encodeVarint(innerLength);
        out.push(head, prefix, ...parts);
        length += head.length + prefix.length + innerLength;
        copyFrom = pos;
      }
    } else throw new WireFormatError(`wire type ${wire}`);
    if (pos > end) throw new WireFormatError('a field past the end of its message');
  }
  flush(end);
  return length;
}

/**
 * The entries that follow one of a one-byte tag, in a tight loop (a big DesiredState has 300,000
 * in a row); returns where the first that is not one (or not simple: a length of 5 bytes, one past
 * the end) starts, for the general loop to take from there.
 */
function entriesAfter(buf: Uint8Array, from: number, end: number, tagByte: number, list: List): number {
  let pos = from;
  while (pos < end && buf[pos] === tagByte) {
    let p = pos + 1;
    let b = buf[p++] as number;
    let len = b & 0x7f;
    if (b >= 0x80) {
      b = buf[p++] as number;
      len |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = buf[p++] as number;
        len |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = buf[p++] as number;
          len |= (b & 0x7f) << 21;
          if (b >= 0x80) break;
        }
      }
    }
    const e = p + len;
    if (p > end || e > end) break;
    list.push(pos, e, p);
    pos = e;
  }
  return pos;
}

/** What a length-delimited field of a message at this level is: a message on the path, a member entry, or neither. */
function childOf(level: Level, field: number): Level | 'entry' | undefined {
  switch (level) {
    case 'server':
      return field === SERVER_DESIRED_STATE ? 'desired' : undefined;
    case 'desired':
      return field === DESIRED_CONFIG ? 'config' : undefined;
    case 'config':
      return field === CONFIG_XRAY ? 'xray' : field === CONFIG_USER_LIMITS ? 'entry' : undefined;
    case 'xray':
      return field === XRAY_INBOUNDS ? 'inbound' : undefined;
    case 'inbound':
      return field === INBOUND_USERS ? 'entry' : undefined;
  }
}
