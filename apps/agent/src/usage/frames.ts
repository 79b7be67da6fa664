/**
 * The journal's on-disk unit: a frame is `[u32 LE payload length][u32 LE CRC-32 of the payload]
 * [payload: UTF-8 JSON]`. A frame is appended with one write and made durable before anything it
 * records is acted on, so after a crash only the last frame can be incomplete: replay stops at the
 * first frame whose length runs past the end of the file or whose checksum does not match, and
 * that tail is cut off (it was never acknowledged as written, so nothing relied on it).
 *
 * Byte counters and report ids are int64 on the wire and may pass 2^53, so payloads carry them
 * as decimal strings; rows are flat arrays (`[email, up, down, email, up, down, …]`) because a
 * 100,000-user collection is mostly rows and arrays of objects cost twice as much to encode.
 */
import { crc32 } from 'node:zlib';

export const HEADER_BYTES = 8;

/** Resets the state: what a compacted file starts with. */
export interface SnapshotFrame {
  t: 'snap';
  /** The highest report id ever issued (acknowledged or not), so ids keep rising after compaction. */
  last: string;
  instance: string | null;
}

/** One collection (or, in a compacted file, a chunk of baselines or one pending record). */
export interface CollectionFrame {
  t: 'col';
  /** Engine instance the baselines belong to; a different one than the state's drops every baseline first. */
  instance: string;
  /** New baselines, flat: email, uplink, downlink. */
  base: string[];
  /** Report records, each `{ id, e: [subscription_id, uplink, downlink, …] }`. */
  recs: Array<{ id: string; e: string[] }>;
}

export interface AckFrame {
  t: 'ack';
  id: string;
}

export type Frame = SnapshotFrame | CollectionFrame | AckFrame;

export function encodeFrame(frame: Frame): Buffer {
  const payload = Buffer.from(JSON.stringify(frame), 'utf8');
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32LE(payload.length, 0);
  header.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([header, payload]);
}

/** Every whole frame of `bytes` in order, and where the valid prefix ends (the rest is a torn tail). */
export function decodeFrames(bytes: Buffer): { frames: Frame[]; validBytes: number } {
  const frames: Frame[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    const end = at + HEADER_BYTES + length;
    if (end > bytes.length) break;
    const payload = bytes.subarray(at + HEADER_BYTES, end);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) break;
    frames.push(JSON.parse(payload.toString('utf8')) as Frame);
    at = end;
  }
  return { frames, validBytes: at };
}
