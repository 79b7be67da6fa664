import { gzipSync } from 'node:zlib';

/**
 * A link's body as sent: its UTF-8 bytes and, once an app that takes gzip has asked for it, the
 * same gzip'd (kept beside it, so a body is compressed once however many apps fetch it). Client
 * apps' HTTP stacks ask for gzip on their own (Android's HttpURLConnection under v2rayNG, Go's
 * net/http under mihomo and sing-box, Dart's under Hiddify) and undo it before reading; a link of
 * ten servers in base64 is ~2.3× smaller gzip'd.
 */
export interface EncodedBody {
  readonly identity: Buffer<ArrayBuffer>;
  /** The gzip'd bytes once made; null when gzip would not pay (a short body). */
  gzip?: Buffer<ArrayBuffer> | null;
}

/** Bodies shorter than this go as they are: a gzip header and trailer outweigh what it saves. */
export const GZIP_FROM_BYTES = 512;

/** The bytes to send and whether they are gzip'd: gzip'd when the app takes it and it pays. */
export function encodedBody(body: EncodedBody, takesGzip: boolean): { body: Buffer<ArrayBuffer>; gzip: boolean } {
  if (!takesGzip) return { body: body.identity, gzip: false };
  if (body.gzip === undefined)
    body.gzip = body.identity.byteLength < GZIP_FROM_BYTES ? null : (gzipSync(body.identity) as Buffer<ArrayBuffer>);
  return body.gzip === null ? { body: body.identity, gzip: false } : { body: body.gzip, gzip: true };
}
