import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * RFC 2136 dynamic UPDATE messages signed with TSIG (RFC 8945), for adding and removing single
 * TXT values (DNS-01). No library on npm encodes class NONE (delete one RR) or signs TSIG, so
 * the few bytes are written here on node:crypto. Only what DNS-01 needs: one zone, TXT adds
 * (class IN) and single-value deletes (class NONE, RFC 2136 2.5.4: never the whole set, so the
 * apex and wildcard challenges of one name can run at once).
 */

export const TSIG_ALGORITHMS = { 'hmac-sha256': 'sha256', 'hmac-sha512': 'sha512' } as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

export interface TsigKey {
  name: string;
  algorithm: TsigAlgorithm;
  /** The shared secret, base64 (as tsig-keygen prints it). */
  secret: string;
}

export type TxtChange = { op: 'add'; name: string; value: string; ttl: number } | { op: 'delete'; name: string; value: string };

const T_SOA = 6;
const T_TXT = 16;
const T_TSIG = 250;
const C_IN = 1;
const C_NONE = 254;
const C_ANY = 255;
const OPCODE_UPDATE = 5;
/** Seconds of clock difference TSIG allows (RFC 8945 recommends 300). */
const FUDGE = 300;

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u48 = (n: number) => {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
};

/** A name in wire form, uncompressed and lower-cased (the canonical form TSIG signs). */
export function nameWire(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.');
  if (labels.some((l) => l.length === 0)) throw new Error(`not a domain name: ${JSON.stringify(name.slice(0, 80))}`);
  const parts = labels.map((l) => {
    const b = Buffer.from(l.toLowerCase(), 'ascii');
    if (b.length > 63 || !/^[\x21-\x7e]+$/.test(l)) throw new Error(`not a domain name label: ${JSON.stringify(l.slice(0, 80))}`);
    return Buffer.concat([Buffer.from([b.length]), b]);
  });
  const wire = Buffer.concat([...parts, Buffer.from([0])]);
  if (wire.length > 255) throw new Error('domain name longer than 255 bytes');
  return wire;
}

/** A TXT value as character-strings of at most 255 bytes each. */
function txtRdata(value: string): Buffer {
  const v = Buffer.from(value, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < v.length || i === 0; i += 255) {
    const c = v.subarray(i, i + 255);
    out.push(Buffer.from([c.length]), c);
  }
  return Buffer.concat(out);
}

const rr = (name: string, type: number, klass: number, ttl: number, rdata: Buffer) =>
  Buffer.concat([nameWire(name), u16(type), u16(klass), u32(ttl), u16(rdata.length), rdata]);

const tsigVariables = (key: TsigKey, timeSigned: number, error: number, other: Buffer) =>
  Buffer.concat([
    nameWire(key.name),
    u16(C_ANY),
    u32(0),
    nameWire(`${key.algorithm}.`),
    u48(timeSigned),
    u16(FUDGE),
    u16(error),
    u16(other.length),
    other,
  ]);

const mac = (key: TsigKey, data: Buffer) =>
  createHmac(TSIG_ALGORITHMS[key.algorithm], Buffer.from(key.secret, 'base64')).update(data).digest();

export interface SignedUpdate {
  message: Buffer;
  id: number;
  mac: Buffer;
}

/** A signed UPDATE of `zone` carrying `changes`, timed `nowSeconds`. */
export function signedUpdate(zone: string, changes: readonly TxtChange[], key: TsigKey, nowSeconds: number): SignedUpdate {
  const id = randomInt(0, 65536);
  const updates = changes.map((c) =>
    c.op === 'add' ? rr(c.name, T_TXT, C_IN, c.ttl, txtRdata(c.value)) : rr(c.name, T_TXT, C_NONE, 0, txtRdata(c.value)),
  );
  const header = Buffer.concat([u16(id), u16(OPCODE_UPDATE << 11), u16(1), u16(0), u16(updates.length), u16(0)]);
  const unsigned = Buffer.concat([header, nameWire(zone), u16(T_SOA), u16(C_IN), ...updates]);
  const signature = mac(key, Buffer.concat([unsigned, tsigVariables(key, nowSeconds, 0, Buffer.alloc(0))]));
  const tsig = Buffer.concat([
    nameWire(`${key.algorithm}.`),
    u48(nowSeconds),
    u16(FUDGE),
    u16(signature.length),
    signature,
    u16(id),
    u16(0),
    u16(0),
  ]);
  const message = Buffer.concat([unsigned, rr(key.name, T_TSIG, C_ANY, 0, tsig)]);
  message.writeUInt16BE(1, 10);
  return { message, id, mac: signature };
}

/** The server's answer to an UPDATE: its RCODE and, when it signed, the TSIG error (0 = none). */
export interface UpdateAnswer {
  rcode: number;
  tsigError: number;
  signed: boolean;
}

export class DnsAnswerError extends Error {}

/** Reads past a name (labels or a compression pointer), bounds-checked: a hostile answer cannot loop or read past its end. */
function skipName(buf: Buffer, start: number): number {
  let off = start;
  for (let labels = 0; labels < 128; labels++) {
    if (off >= buf.length) throw new DnsAnswerError('truncated name');
    const len = buf[off] as number;
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) {
      if (off + 2 > buf.length) throw new DnsAnswerError('truncated name pointer');
      return off + 2;
    }
    if (len & 0xc0) throw new DnsAnswerError('bad label type');
    off += 1 + len;
  }
  throw new DnsAnswerError('name with too many labels');
}

function need(buf: Buffer, off: number, n: number): void {
  if (off + n > buf.length) throw new DnsAnswerError('truncated answer');
}

/**
 * Checks the answer to `req`: its id, and its TSIG (RFC 8945 5.3: the MAC over the request's
 * MAC and the answer) with the same key, within the fudge of `nowSeconds`. An unsigned answer
 * is taken only as a refusal (BADSIG/BADKEY answers carry no MAC); success must be signed.
 */
export function checkAnswer(answer: Buffer, req: SignedUpdate, key: TsigKey, nowSeconds: number): UpdateAnswer {
  need(answer, 0, 12);
  if (answer.readUInt16BE(0) !== req.id) throw new DnsAnswerError('the answer is for another message');
  const rcode = (answer.readUInt16BE(2) & 0xf) as number;
  const [qd, an, ns, ar] = [4, 6, 8, 10].map((o) => answer.readUInt16BE(o)) as [number, number, number, number];
  let off = 12;
  for (let i = 0; i < qd; i++) {
    off = skipName(answer, off) + 4;
    need(answer, off, 0);
  }
  const skipRR = (at: number) => {
    const end = skipName(answer, at);
    need(answer, end, 10);
    const next = end + 10 + answer.readUInt16BE(end + 8);
    need(answer, next, 0);
    return next;
  };
  for (let i = 0; i < an + ns + Math.max(0, ar - 1); i++) off = skipRR(off);
  if (ar < 1) {
    if (rcode !== 0) return { rcode, tsigError: 0, signed: false };
    throw new DnsAnswerError('the server answered without a signature');
  }
  const tsigStart = off;
  off = skipName(answer, off);
  need(answer, off, 10);
  if (answer.readUInt16BE(off) !== T_TSIG) throw new DnsAnswerError('the last record is not a TSIG');
  let p = skipName(answer, off + 10);
  need(answer, p, 10);
  const timeSigned = answer.readUIntBE(p, 6);
  const fudge = answer.readUInt16BE(p + 6);
  const macLen = answer.readUInt16BE(p + 8);
  need(answer, p + 10, macLen + 6);
  const theirMac = answer.subarray(p + 10, p + 10 + macLen);
  p += 10 + macLen;
  const originalId = answer.readUInt16BE(p);
  const error = answer.readUInt16BE(p + 2);
  const otherLen = answer.readUInt16BE(p + 4);
  need(answer, p + 6, otherLen);
  const other = answer.subarray(p + 6, p + 6 + otherLen);
  if (macLen === 0) {
    if (rcode !== 0 || error !== 0) return { rcode, tsigError: error, signed: false };
    throw new DnsAnswerError('the server answered without a signature');
  }
  const body = Buffer.from(answer.subarray(0, tsigStart));
  body.writeUInt16BE(ar - 1, 10);
  body.writeUInt16BE(originalId, 0);
  const expected = mac(key, Buffer.concat([u16(req.mac.length), req.mac, body, tsigVariables(key, timeSigned, error, other)]));
  if (expected.length !== theirMac.length || !timingSafeEqual(expected, theirMac))
    throw new DnsAnswerError("the answer's signature does not verify");
  if (Math.abs(nowSeconds - timeSigned) > fudge)
    throw new DnsAnswerError("the answer's signature time is outside the allowed clock difference");
  return { rcode, tsigError: error, signed: true };
}

const RCODES: Record<number, string> = {
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
};
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** The answer in words: "NOTAUTH (BADSIG)". */
export const describeAnswer = (a: UpdateAnswer): string =>
  `${RCODES[a.rcode] ?? `RCODE ${a.rcode}`}${a.tsigError ? ` (${TSIG_ERRORS[a.tsigError] ?? `TSIG error ${a.tsigError}`})` : ''}`;
