import type { ServerMessage } from '@svc/proto';
import type { Compressed, Compressor } from './cached-gzip.ts';
import { type SyncWire, wrapSyncSerializer } from './sync-serializer.ts';

const ENCODED = Symbol('svc.preEncodedServerMessage');

/** A ServerMessage's bytes made before the send, and what is known of them gzip'd. */
export interface Encoded {
  bytes: Uint8Array;
  /** The same bytes gzip'd at `level` (kept with them: last-push-store.ts), sent as they are when the send is gzip'd at that level. */
  gzip?: { level: number; bytes: Uint8Array };
  /** Told what the compressor made of `bytes` when the send was gzip'd (and `gzip` was not used). */
  compressed?: (level: number, gzipped: Compressed) => void;
}

/**
 * A ServerMessage whose bytes are already made (a big node's DesiredState: kept-source.ts):
 * the Sync serializer sends them as they are. `message` is what those bytes encode, as far as
 * whoever looks at the value needs (sent-metrics.ts counts a DesiredState by its presence).
 */
export function preEncoded(message: ServerMessage, encoded: Encoded): ServerMessage {
  return Object.assign(message, { [ENCODED]: encoded });
}

/**
 * The seam for preEncoded messages: a Sync serializer that sends their bytes as they are (and
 * encodes the rest), and a compressor that sends their kept gzip as it is, or tells them what
 * it made. grpc-js serializes a message and hands the bytes to the compressor in the same
 * synchronous call (patches/@grpc__grpc-js@1.14.3.patch; sent-metrics.ts relies on the same),
 * so the message just serialized is remembered until the end of the task.
 */
export function preEncodedSends(): {
  definition<W extends SyncWire>(def: W): W;
  compressor(compress: Compressor): Compressor;
} {
  let current: Encoded | null = null;
  const clear = () => {
    current = null;
  };
  return {
    definition: (def) =>
      wrapSyncSerializer(def, (encode) => (value) => {
        const encoded = (value as { [ENCODED]?: Encoded })[ENCODED];
        if (!encoded) return encode(value);
        current = encoded;
        queueMicrotask(clear);
        return encoded.bytes;
      }),
    compressor(compress) {
      return (bytes, encoding, level, done) => {
        const encoded = current;
        current = null;
        // grpc-js hands over a copy behind the 5-byte frame header: same length, same content.
        if (!encoded || encoded.bytes.length !== bytes.length || encoding !== 'gzip') {
          compress(bytes, encoding, level, done);
          return;
        }
        const kept = encoded.gzip;
        if (kept && kept.level === level) {
          process.nextTick(() => done(null, Buffer.from(kept.bytes.buffer, kept.bytes.byteOffset, kept.bytes.byteLength)));
          return;
        }
        compress(bytes, encoding, level, (error, gzipped) => {
          if (!error && gzipped) encoded.compressed?.(level, gzipped);
          done(error, gzipped);
        });
      };
    },
  };
}
