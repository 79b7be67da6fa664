import type { BinaryReader } from '@bufbuild/protobuf/wire';
import { type Decodes, decodeFlat } from './flat-reader.ts';
import { type Encodes, encodeFlat } from './flat-writer.ts';
import { ControlPlaneDefinition, ServerMessage } from './gen/svc/controlplane/v1/controlplane.ts';
import type { ServerMessageDecoder } from './server-message-decoder.ts';

interface Codec<T> extends Encodes<T>, Decodes<T> {}

function method<Req, Res, const ReqStream extends boolean, const ResStream extends boolean>(m: {
  name: string;
  requestType: Codec<Req>;
  requestStream: ReqStream;
  responseType: Codec<Res>;
  responseStream: ResStream;
  options: object;
}) {
  return {
    path: `/${ControlPlaneDefinition.fullName}/${m.name}`,
    requestStream: m.requestStream,
    responseStream: m.responseStream,
    requestSerialize: (value: Req) => encodeFlat(m.requestType, value),
    requestDeserialize: (bytes: Uint8Array) => decodeFlat(m.requestType, bytes),
    responseSerialize: (value: Res) => encodeFlat(m.responseType, value),
    responseDeserialize: (bytes: Uint8Array) => decodeFlat(m.responseType, bytes),
    options: m.options,
  };
}

/**
 * svc.controlplane.v1.ControlPlane as a nice-grpc service definition for the server: the
 * same paths and messages as the generated `ControlPlaneDefinition`, but messages are
 * encoded with FlatWriter and taken as complete messages. The generated definition runs
 * every response through `fromPartial` (a deep copy: 200,000 objects for a 100,000-user
 * DesiredState) and then through BinaryWriter; an implementation typed against this
 * definition must return complete messages instead, which TypeScript checks. Messages are
 * decoded over FlatReader (flat-reader.ts): the generated decoders, strings cut from the bytes.
 */
export const ControlPlaneWireDefinition = {
  enroll: method(ControlPlaneDefinition.methods.enroll),
  sync: method(ControlPlaneDefinition.methods.sync),
} as const;

/**
 * svc.controlplane.v1.ControlPlane for the agent's nice-grpc client: the generated definition
 * (requests go through fromPartial and the generated encoder, as before), with the
 * ServerMessages of Sync decoded over FlatReader: the same messages, a 100,000-user
 * DesiredState ~20% sooner. With a ServerMessageDecoder (the agent keeps one across its
 * streams), a big DesiredState's unchanged members are taken from the one before.
 */
export function controlPlaneAgentDefinition(decoder?: ServerMessageDecoder) {
  const whole = decoder ? (bytes: Uint8Array) => decoder.decode(bytes) : (bytes: Uint8Array) => decodeFlat(ServerMessage, bytes);
  return {
    ...ControlPlaneDefinition,
    methods: {
      ...ControlPlaneDefinition.methods,
      sync: {
        ...ControlPlaneDefinition.methods.sync,
        responseType: {
          ...ServerMessage,
          decode: (input: BinaryReader | Uint8Array, length?: number): ServerMessage =>
            input instanceof Uint8Array && length === undefined ? whole(input) : ServerMessage.decode(input, length),
        },
      },
    },
  } as const;
}

/** The agent's definition without a decoder of its own: every message decoded whole. */
export const ControlPlaneAgentDefinition = controlPlaneAgentDefinition();
