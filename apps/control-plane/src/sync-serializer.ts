import type { ServerMessage } from '@svc/proto';

/** A definition whose Sync answers ServerMessages: the gateway's guarded one, or the plain wire definition. */
export type SyncWire = { sync: { responseSerialize(value: ServerMessage): Uint8Array } };

/** The definition with its Sync serializer replaced by `wrap(the serializer it had)`. */
export function wrapSyncSerializer<W extends SyncWire>(
  def: W,
  wrap: (encode: (value: ServerMessage) => Uint8Array) => (value: ServerMessage) => Uint8Array,
): W {
  return { ...def, sync: { ...def.sync, responseSerialize: wrap(def.sync.responseSerialize) } };
}
