import { findUnstorableText, TEXT_RULE } from '@svc/domain';
import type { AgentMessage, ControlPlaneWireDefinition, EnrollRequest } from '@svc/proto';
import { Status } from 'nice-grpc';

/**
 * What the gateway accepts from agents, checked where each message is decoded (the
 * service definition's requestDeserialize), once for every field of every message.
 *
 * Sizes. grpc-js checks a message's length prefix against the method's limit as soon as its
 * 5 bytes arrive (patches/@grpc__grpc-js@1.14.3.patch, grpc-node.max_receive_message_length_by_method),
 * so nothing of a larger message is buffered, and the decompressed size against the same limit:
 * - Enroll (no client certificate, anyone can call it): 16 KiB. An EnrollRequest is a 43-byte
 *   token, a P-256 or Ed25519 CSR (~300-600 bytes as PEM), a hostname (<= 253) and a version:
 *   under 2 KiB; 16 KiB leaves room for CSR attributes and extensions, and refuses a 64 KiB one.
 * - Sync (a verified client certificate; an unauthenticated Sync is refused before its first
 *   byte is read, identity-interceptor.ts): grpc.max_receive_message_bytes, 16 MiB by default.
 *   The largest legitimate AgentMessage is a UsageReport naming every subscription the node
 *   serves (~48 bytes an entry: 100,000 subscriptions are ~4.8 MiB) or a LogBatch answering
 *   get_logs (at most 5,000 lines).
 * - Within Sync, the kinds that carry a few short fields have their own bound (KIND_LIMITS),
 *   checked on the decoded message's encoded length: a 16 MiB Hello is refused.
 *
 * Text. Every string of a decoded message passes the one text rule (findUnstorableText, no
 * NUL, no unpaired surrogate), except a UsageReport's entries: the domain's usage ingest drops
 * a bad entry and the report is still acknowledged (issue 12.1, 12.4).
 *
 * The decoder hands the handler the message with its fault (Inbound: the fault null when it
 * passed every rule), because what follows depends on the message: Enroll answers the status;
 * Sync decides per kind (sync-stream.ts). A message that does not decode at all is refused by
 * grpc-js with INVALID_ARGUMENT (patched; it was INTERNAL).
 */
export const ENROLL_MAX_BYTES = 16 * 1024;

/** Bounds of the small kinds of AgentMessage (the whole encoded message). */
export const KIND_LIMITS: Readonly<Partial<Record<keyof AgentMessage, number>>> = {
  hello: 16 * 1024,
  status: 16 * 1024,
  certRenewal: 16 * 1024,
  upgradeResult: 16 * 1024,
  // Xray's error output when a configuration does not apply; longer is cut by the domain anyway.
  applyResult: 64 * 1024,
};

/** Why a received message is refused: the status, the field (protobuf name, dot path) and the reason. */
export interface InboundFault {
  code: Status.INVALID_ARGUMENT | Status.RESOURCE_EXHAUSTED;
  field: string;
  reason: string;
}

/** A decoded message as the handlers receive it: the message, and the fault the decode step found (null: none). */
export interface Inbound<T> {
  message: T;
  fault: InboundFault | null;
}

/** `field: reason` as status details and log fields. */
export const describeFault = (f: InboundFault): string => `${f.field}: ${f.reason}`;

/** ts-proto's camelCase property path -> the protobuf field names agent authors know. */
const protoPath = (path: string) => path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The one text rule over a decoded message; the path names the protobuf field. */
export function textFault(message: object): InboundFault | null {
  const bad = findUnstorableText(message);
  return bad ? { code: Status.INVALID_ARGUMENT, field: protoPath(bad), reason: TEXT_RULE } : null;
}

function kindOf(m: AgentMessage): keyof AgentMessage | null {
  for (const k of ['hello', 'applyResult', 'status', 'usage', 'logs', 'certRenewal', 'upgradeResult'] as const) if (m[k]) return k;
  return null;
}

function agentMessageFault(m: AgentMessage, bytes: number): InboundFault | null {
  const kind = kindOf(m);
  if (!kind) return null;
  const limit = KIND_LIMITS[kind];
  if (limit !== undefined && bytes > limit) {
    return { code: Status.RESOURCE_EXHAUSTED, field: protoPath(kind), reason: `at most ${limit} bytes (${bytes} received)` };
  }
  // Usage entries are the domain's: a bad one is dropped, the report acknowledged.
  if (kind === 'usage') return null;
  return textFault(m);
}

type Wire = typeof ControlPlaneWireDefinition;

/** A method whose requests arrive as Inbound<Req>. */
type Guarded<M extends { requestSerialize(v: never): Uint8Array }, Req> = Omit<M, 'requestSerialize' | 'requestDeserialize'> & {
  requestSerialize(value: Inbound<Req>): Uint8Array;
  requestDeserialize(bytes: Uint8Array): Inbound<Req>;
};

/** The gateway's service definition: the wire definition with the checks above in its request decoders. */
export type GuardedWire = { enroll: Guarded<Wire['enroll'], EnrollRequest>; sync: Guarded<Wire['sync'], AgentMessage> };

/** The service definition with the checks above in its request decoders, each answer the message and its fault. */
export function guardedDefinition(def: Wire): GuardedWire {
  const enroll = def.enroll;
  const sync = def.sync;
  return {
    enroll: {
      ...enroll,
      requestSerialize: (value) => enroll.requestSerialize(value.message),
      requestDeserialize: (bytes) => {
        const message = enroll.requestDeserialize(bytes);
        return { message, fault: textFault(message) };
      },
    },
    sync: {
      ...sync,
      requestSerialize: (value) => sync.requestSerialize(value.message),
      requestDeserialize: (bytes) => {
        const message = sync.requestDeserialize(bytes);
        return { message, fault: agentMessageFault(message, bytes.length) };
      },
    },
  };
}

/** The per-method receive limits for grpc-js (paths of the definition). */
export function receiveLimits(def: Wire, syncMaxBytes: number, enrollMaxBytes = ENROLL_MAX_BYTES): Record<string, number> {
  return { [def.enroll.path]: enrollMaxBytes, [def.sync.path]: syncMaxBytes };
}
