import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { type Compressed, type Compressor, createCachedGzip } from '../src/cached-gzip.ts';

// The gateway and the agent depend on eight changes to @grpc/grpc-js (patches/,
// docs/agent-gateway.md "Why a patch"): response compression, per-method receive limits, three
// client errors that were INTERNAL or a crash, compressed responses compressed without a framing
// copy first, and written as the compressor's chunks without joining them (server-interceptors.js),
// and messages decompressed in large chunks
// (compression-filter.js, the agent's side). This test fails loudly when the installed grpc-js is not the version the
// patch was written for, or when any of the eight is missing from what is installed: an upgrade
// must carry each one over (or prove upstream has it) before anything else runs.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
const require = createRequire(join(root, 'apps/control-plane/package.json'));
const grpcDir = dirname(require.resolve('@grpc/grpc-js/package.json'));

/** Each change, by the file it is in. */
const PATCHED: Record<string, string[]> = {
  'build/src/server-interceptors.js': [
    'svc patch: response compression',
    'svc patch: per-method receive limits',
    'svc patch: a malformed header is the client',
    'svc patch: a message that does not decompress is the client',
    'svc patch: a request that does not decode is the client',
    'svc patch: a compressed response is compressed from the serialized message',
    'svc patch: the compressor may hand its output as a list of chunks',
    'svc patch: `response` is a frame, or a frame as a list of chunks',
  ],
  'build/src/compression-filter.js': ['svc patch: decompressed in large chunks'],
};

const PATH = '/svc.test.Echo/Bytes';
const same = (b: Buffer) => b;

/**
 * A server that answers each request with the bytes it names, compressed with gzip (the patch's
 * response compression, as the gateway's; by `compressor` when given), and a client as the
 * agent's (grpc-js). `received` holds every message the client deserialized, as handed to it.
 */
async function echoPair(compressor?: Compressor) {
  const server = new grpc.Server({
    'grpc.default_compression_algorithm': 2,
    'grpc-node.response_compression_min_bytes': 1,
    ...(compressor ? { 'grpc-node.response_compressor': compressor } : {}),
  } as grpc.ServerOptions);
  const answers = new Map<string, Buffer>();
  server.addService(
    {
      bytes: {
        path: PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: same,
        requestDeserialize: same,
        responseSerialize: same,
        responseDeserialize: same,
      },
    },
    {
      bytes: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
        done(null, answers.get(call.request.toString()) ?? Buffer.alloc(0)),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  const received: Buffer[] = [];
  const ask = (name: string) =>
    new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        PATH,
        same,
        (b: Buffer) => (received.push(b), b),
        Buffer.from(name),
        (err, b) => (err ? reject(err) : resolve(b as Buffer)),
      ),
    );
  const close = () => {
    client.close();
    server.forceShutdown();
  };
  return { answers, ask, received, close };
}

/** Compressible text with random runs (what a DesiredState's user lists look like to deflate). */
const textWithNoise = (bytes: number) =>
  Buffer.concat(
    Array.from({ length: Math.ceil(bytes / 1024) }, (_, k) => Buffer.concat([Buffer.from(`entry ${k} `.repeat(60)), randomBytes(400)])),
  ).subarray(0, bytes);

describe('the patched @grpc/grpc-js', () => {
  it('is the version the patch was written for', () => {
    const pinned = /'@grpc\/grpc-js@([0-9.]+)': patches\/@grpc__grpc-js@([0-9.]+)\.patch/.exec(workspace);
    expect(pinned, 'pnpm-workspace.yaml patchedDependencies names the grpc-js patch').not.toBeNull();
    const installed = JSON.parse(readFileSync(join(grpcDir, 'package.json'), 'utf8')).version;
    expect(installed, 'grpc-js changed version: carry patches/@grpc__grpc-js@*.patch over (docs/agent-gateway.md)').toBe(pinned?.[1]);
    expect(pinned?.[2]).toBe(pinned?.[1]);
  });

  it('carries each of the eight changes in what is installed, and the patch file holds no others', () => {
    for (const [file, changes] of Object.entries(PATCHED)) {
      const installed = readFileSync(join(grpcDir, file), 'utf8');
      for (const change of changes) expect(installed, `${file}: ${change}`).toContain(change);
    }
    const patch = readFileSync(join(root, 'patches/@grpc__grpc-js@1.14.3.patch'), 'utf8');
    const named = new Set(patch.match(/svc patch: [^.(:]+/g));
    const known = Object.values(PATCHED).flat();
    for (const change of named)
      expect(
        known.some((k) => k.startsWith(change) || change.startsWith(k)),
        `unlisted change: ${change}`,
      ).toBe(true);
    expect(new Set(patch.match(/^\+\+\+ b\/(.+)$/gm)?.map((l) => l.slice(6)))).toEqual(new Set(Object.keys(PATCHED)));
  });

  it('a big gzip response inflates at the client into one buffer of its own, handed over without a copy; a small one copied out of its chunk as before', async () => {
    const { answers, ask, received, close } = await echoPair();
    try {
      // Compressible text with random runs, 6 MiB: inflated in one chunk of its size and a byte.
      const big = textWithNoise(6 * 2 ** 20);
      answers.set('big', big);
      expect((await ask('big')).equals(big)).toBe(true);
      const got = received.at(-1) as Buffer;
      expect(got.buffer.byteLength).toBe(big.length + 1);
      // A small message is copied out of its chunk as before (it does not hold a bigger buffer).
      answers.set('small', Buffer.from('x'.repeat(5000)));
      expect((await ask('small')).toString()).toBe('x'.repeat(5000));
      expect((received.at(-1) as Buffer).buffer.byteLength).toBeLessThan(64 * 1024);
      // Random bytes (gzip makes them bigger): the trailer names their size, still one buffer.
      const noise = randomBytes(3 * 2 ** 20);
      answers.set('noise', noise);
      expect((await ask('noise')).equals(noise)).toBe(true);
    } finally {
      close();
    }
  }, 60_000);

  it('a compressed response handed over as a list of chunks (the gateway’s cached gzip: kept pieces) arrives whole, its chunks not joined first', async () => {
    const gz = createCachedGzip({ cacheBytes: 64 * 2 ** 20 });
    const handed: Compressed[] = [];
    const { answers, ask, close } = await echoPair((bytes, encoding, level, done) =>
      gz.compress(bytes, encoding, level, (err, out) => {
        if (out) handed.push(out);
        done(err, out);
      }),
    );
    try {
      const big = textWithNoise(4 * 2 ** 20);
      answers.set('big', big);
      expect((await ask('big')).equals(big)).toBe(true);
      // The same message again: every piece from the cache, the same chunk objects written again.
      expect((await ask('big')).equals(big)).toBe(true);
      const [first, again] = handed as [readonly Buffer[], readonly Buffer[]];
      expect(Array.isArray(first) && first.length > 3).toBe(true);
      expect(again.slice(1, -2).every((piece, k) => piece === first[k + 1])).toBe(true);
      // A small message: one buffer, framed as before.
      answers.set('small', Buffer.from('y'.repeat(3000)));
      expect((await ask('small')).toString()).toBe('y'.repeat(3000));
      expect(Buffer.isBuffer(handed.at(-1))).toBe(true);
    } finally {
      close();
    }
  }, 60_000);
});
