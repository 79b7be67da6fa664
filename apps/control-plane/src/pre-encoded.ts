import type { ServerMessage } from '@svc/proto';

const ENCODED = Symbol('svc.preEncodedServerMessage');

/** A definition whose Sync answers ServerMessages. */
type Wire = { sync: { responseSerialize(value: ServerMessage): Uint8Array } };

/**
 * A ServerMessage whose bytes are already made (a big node's DesiredState kept on disk:
 * last-push-store.ts): the Sync serializer sends `bytes` as they are. `message` is what those
 * bytes encode, as far as whoever looks at the value needs (sent-metrics.ts counts a
 * DesiredState by its presence).
 */
export function preEncoded(message: ServerMessage, bytes: Uint8Array): ServerMessage {
  return Object.assign(message, { [ENCODED]: bytes });
}

/** The definition with a Sync serializer that sends the bytes of a preEncoded message as they are and encodes the rest. */
export function sendsPreEncoded<W extends Wire>(def: W): W {
  const encode = def.sync.responseSerialize;
  return {
    ...def,
    sync: {
      ...def.sync,
      responseSerialize: (value: ServerMessage) => (value as { [ENCODED]?: Uint8Array })[ENCODED] ?? encode(value),
    },
  };
}
