import type { BinaryReader } from '@bufbuild/protobuf/wire';
import { type Encodes, encodeFlat } from './flat-writer.ts';
import { ControlPlaneDefinition } from './gen/svc/controlplane/v1/controlplane.ts';

interface Codec<T> extends Encodes<T> {
  decode(input: BinaryReader | Uint8Array, length?: number): T;
}

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
    requestDeserialize: (bytes: Uint8Array) => m.requestType.decode(bytes),
    responseSerialize: (value: Res) => encodeFlat(m.responseType, value),
    responseDeserialize: (bytes: Uint8Array) => m.responseType.decode(bytes),
    options: m.options,
  };
}

/**
 * svc.controlplane.v1.ControlPlane as a nice-grpc service definition for the server: the
 * same paths and messages as the generated `ControlPlaneDefinition`, but messages are
 * encoded with FlatWriter and taken as complete messages. The generated definition runs
 * every response through `fromPartial` (a deep copy: 200,000 objects for a 100,000-user
 * DesiredState) and then through BinaryWriter; an implementation typed against this
 * definition must return complete messages instead, which TypeScript checks.
 */
export const ControlPlaneWireDefinition = {
  enroll: method(ControlPlaneDefinition.methods.enroll),
  sync: method(ControlPlaneDefinition.methods.sync),
} as const;
