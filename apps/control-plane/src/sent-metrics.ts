import type { Metrics } from '@svc/metrics';
import { type Compressor, compressedLength } from './cached-gzip.ts';
import { type SyncWire, wrapSyncSerializer } from './sync-serializer.ts';

/**
 * Counts the DesiredStates the gateway sends and their bytes, raw and as sent.
 *
 * The raw size is taken where each ServerMessage is encoded (the Sync method's
 * responseSerialize). Whether it then goes out gzip'd is grpc-js's choice (the agent accepts
 * gzip, the message is at least grpc.gzip_min_bytes; patches/@grpc__grpc-js@1.14.3.patch),
 * made in the same synchronous call that encoded it: sendMessage serializes, then hands the
 * bytes to the compressor before returning. So an encoded DesiredState is remembered until the
 * end of the current task: the compressor, when it is called for those bytes, counts what it
 * produced as sent; otherwise a microtask counts the raw size as sent.
 */
export function sentMetrics(metrics: Metrics): {
  definition<W extends SyncWire>(def: W): W;
  compressor(compress: Compressor): Compressor;
} {
  let pending: Uint8Array | null = null;
  const settle = () => {
    if (pending) metrics.desiredStateSentBytes.inc(pending.length);
    pending = null;
  };
  return {
    definition: (def) =>
      wrapSyncSerializer(def, (encode) => (value) => {
        const bytes = encode(value);
        if (value.desiredState) {
          metrics.desiredStatesSent.inc();
          metrics.desiredStateRawBytes.inc(bytes.length);
          metrics.desiredStateSize.observe(bytes.length);
          settle();
          pending = bytes;
          queueMicrotask(settle);
        }
        return bytes;
      }),
    compressor(compress) {
      return (bytes, encoding, level, done) => {
        // grpc-js hands over a copy behind the 5-byte frame header: same length, same content.
        const mine = pending !== null && pending.length === bytes.length;
        if (mine) pending = null;
        compress(bytes, encoding, level, (error, compressed) => {
          if (mine && !error && compressed) metrics.desiredStateSentBytes.inc(compressedLength(compressed));
          done(error, compressed);
        });
      };
    },
  };
}
