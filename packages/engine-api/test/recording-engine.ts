import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the engine's API port that accepts a unary gRPC call on ANY path and records
 * it (the `:path` and the request message bytes), so a test sees exactly what the client put on
 * the wire, wrong prefixes included. It answers each call with `reply(path)`: a response
 * message (bytes) or a gRPC error status and message, as the engine would.
 */

export interface RecordedCall {
  path: string;
  message: Uint8Array;
}

export type Reply = { message: Uint8Array } | { status: number; text: string };

export interface RecordingEngine {
  address: string;
  calls: RecordedCall[];
  close(): Promise<void>;
}

/** gRPC message framing: 1 byte compressed flag, 4 bytes big-endian length, the message. */
function frame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** grpc-message percent-encoding (gRPC over HTTP/2): only '%' and bytes outside printable ASCII. */
const grpcMessage = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((b) => (b < 0x20 || b > 0x7e || b === 0x25 ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b)))
    .join('');

export async function startRecordingEngine(
  reply: (path: string) => Reply = () => ({ message: new Uint8Array() }),
): Promise<RecordingEngine> {
  const calls: RecordedCall[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    const path = String(headers[':path']);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      calls.push({ path, message: new Uint8Array(body.subarray(5, 5 + body.readUInt32BE(1))) });
      const answer = reply(path);
      if ('status' in answer) {
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': String(answer.status),
            'grpc-message': grpcMessage(answer.text),
          },
          { endStream: true },
        );
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame(answer.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
