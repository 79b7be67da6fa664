import { lookup } from 'node:dns/promises';
import { createRequire } from 'node:module';
import { createServer as createNetServer, isIP, type Server as NetServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { CompatServiceDefinition, ServiceImplementation } from 'nice-grpc';

/**
 * The gateway's gRPC server: grpc-js's Server with nice-grpc's handlers, on a TCP listener of
 * our own, so that the listen backlog is ours to set (issue 17.3).
 *
 * grpc-js binds its port with Node's default backlog (511) and takes no option for it. When
 * thousands of agents reconnect at once (a restarted gateway), the kernel's accept queue
 * overflows, the SYNs it drops come back on TCP's retransmission schedule (1, 3, 7, 15, 31 s
 * after the first), and a storm of seconds stretches to minutes. grpc-js's public
 * `createConnectionInjector` takes connections accepted elsewhere into the same HTTP/2 server
 * a bound port gets (the same credentials, options, interceptors and handlers), so the port
 * is bound here with `backlog` and every accepted socket handed over. Nothing in
 * patches/@grpc__grpc-js@1.14.3.patch changes: its options are server options, as before.
 *
 * nice-grpc's createServer creates the grpc-js Server inside `listen` and keeps it; its method
 * handlers (the same ones it uses there, nice-grpc 2.1.x, pinned by the catalog) are taken from
 * its package.
 */
export interface GatewayGrpcServer {
  /** Binds host:port (port 0: any free port) with this listen backlog; resolves to the port. */
  listen(host: string, port: number, credentials: grpc.ServerCredentials, backlog: number): Promise<number>;
  /** What the listeners are bound to (`0.0.0.0:8443`; a name that resolves to several addresses binds each). */
  addresses(): string[];
  /** Stops accepting, then ends calls gracefully (grpc-js tryShutdown). */
  shutdown(): Promise<void>;
  forceShutdown(): void;
}

type Handler = (definition: unknown, implementation: unknown, middleware: undefined) => grpc.UntypedHandleCall;
/** A method as nice-grpc normalizes it: grpc-js's shape, serializers returning bytes. */
interface NormalizedMethod {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize(value: unknown): Uint8Array;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Uint8Array;
  responseDeserialize(bytes: Buffer): unknown;
}
export interface NiceGrpcInternals {
  normalizeServiceDefinition(d: unknown): Record<string, NormalizedMethod>;
  unary: Handler;
  serverStreaming: Handler;
  clientStreaming: Handler;
  bidi: Handler;
}

export const niceGrpcInternals = (): NiceGrpcInternals => {
  const req = createRequire(createRequire(import.meta.url).resolve('nice-grpc'));
  const defs = req('./service-definitions') as Pick<NiceGrpcInternals, 'normalizeServiceDefinition'>;
  return {
    normalizeServiceDefinition: defs.normalizeServiceDefinition,
    unary: (req('./server/handleUnaryCall') as { createUnaryMethodHandler: Handler }).createUnaryMethodHandler,
    serverStreaming: (req('./server/handleServerStreamingCall') as { createServerStreamingMethodHandler: Handler })
      .createServerStreamingMethodHandler,
    clientStreaming: (req('./server/handleClientStreamingCall') as { createClientStreamingMethodHandler: Handler })
      .createClientStreamingMethodHandler,
    bidi: (req('./server/handleBidiStreamingCall') as { createBidiStreamingMethodHandler: Handler }).createBidiStreamingMethodHandler,
  };
};

/**
 * The grpc-js service definition of nice-grpc's normalized methods, as its own
 * toGrpcJsServiceDefinition makes it except that serialized messages are handed on as a Buffer
 * over the encoder's bytes: nice-grpc wraps each in Buffer.from, which copies (14.5 MiB into
 * fresh memory for a 100,000-user DesiredState). The encoder (FlatWriter) writes every message
 * into memory of its own, so nothing else holds it.
 */
function grpcJsDefinition(normalized: Record<string, NormalizedMethod>): grpc.ServiceDefinition {
  const asBuffer = (bytes: Uint8Array): Buffer =>
    Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(normalized))
    out[name] = {
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestDeserialize: m.requestDeserialize,
      responseDeserialize: m.responseDeserialize,
      requestSerialize: (value) => asBuffer(m.requestSerialize(value)),
      responseSerialize: (value) => asBuffer(m.responseSerialize(value)),
    };
  return out;
}

export function createGatewayGrpcServer<S extends CompatServiceDefinition>(
  options: grpc.ServerOptions,
  definition: S,
  implementation: ServiceImplementation<S>,
): GatewayGrpcServer {
  const nice = niceGrpcInternals();
  const server = new grpc.Server(options);
  const normalized = nice.normalizeServiceDefinition(definition);
  const handlers: grpc.UntypedServiceImplementation = {};
  const impl = implementation as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const [name, method] of Object.entries(normalized)) {
    const fn = (impl[name] as (...args: unknown[]) => unknown).bind(implementation);
    const create = method.requestStream
      ? method.responseStream
        ? nice.bidi
        : nice.clientStreaming
      : method.responseStream
        ? nice.serverStreaming
        : nice.unary;
    handlers[name] = create(method, fn, undefined);
  }
  server.addService(grpcJsDefinition(normalized), handlers);
  let listeners: NetServer[] = [];
  // Stops accepting at once (net's close callback would wait for every accepted connection:
  // those are the HTTP/2 sessions grpc-js ends).
  const closeListeners = () => {
    for (const l of listeners) l.close();
    listeners = [];
  };
  return {
    async listen(host, port, credentials, backlog) {
      const injector = server.createConnectionInjector(credentials);
      // A name binds every address it resolves to, as grpc-js's bindAsync did (Node's listen
      // would take the first alone); the first bound port is the port of the rest.
      const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
      let bound = port;
      for (const address of addresses) {
        const l = createNetServer((socket) => {
          // Until the TLS layer takes it over, an error of the raw socket (a peer that reset
          // while in the accept queue) must not go unhandled.
          socket.on('error', () => {});
          injector.injectConnection(socket);
        });
        await new Promise<void>((resolve, reject) => {
          l.once('error', reject);
          l.listen({ host: address, port: bound, backlog }, () => {
            l.off('error', reject);
            resolve();
          });
        }).catch((err) => {
          closeListeners();
          throw err;
        });
        listeners.push(l);
        const a = l.address();
        if (typeof a === 'object' && a) bound = a.port;
      }
      return bound;
    },
    addresses() {
      return listeners.flatMap((l) => {
        const a = l.address();
        return typeof a === 'object' && a ? [`${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`] : [];
      });
    },
    async shutdown() {
      closeListeners();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
    forceShutdown() {
      closeListeners();
      server.forceShutdown();
    },
  };
}
