import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { gunzipSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressedBytes } from './cached-gzip.ts';
import { parallelCompress } from './parallel-gzip.ts';

const compress = (bytes: Uint8Array, encoding: string, threads: number, level = 1) =>
  new Promise<Buffer>((resolve, reject) =>
    parallelCompress(bytes, encoding, level, (err, out) => (err || !out ? reject(err) : resolve(compressedBytes(out))), threads),
  );

/** Protobuf-like content: repeated structure with random ids, as a big DesiredState has. */
function snapshotLike(bytes: number): Buffer {
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const line = `\n\x12sub_${crypto.randomUUID().replaceAll('-', '')}@svc\x52\x24${crypto.randomUUID()}\x12\x10xtls-rprx-vision`;
    parts.push(line);
    n += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

const python = existsSync('/usr/bin/python3');

/** Python's zlib, an independent decoder: inflates exactly one gzip member and reports what follows it. */
function pythonInflatesOneMember(gz: Buffer): { data: Buffer; eof: boolean; unused: number } {
  const out = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import sys, zlib, json, base64\nd = zlib.decompressobj(16 + zlib.MAX_WBITS)\nraw = d.decompress(sys.stdin.buffer.read())\nprint(json.dumps({"data": base64.b64encode(raw).decode(), "eof": d.eof, "unused": len(d.unused_data)}))',
    ],
    { input: gz, maxBuffer: 256 * 1024 * 1024 },
  );
  const r = JSON.parse(out.toString()) as { data: string; eof: boolean; unused: number };
  return { data: Buffer.from(r.data, 'base64'), eof: r.eof, unused: r.unused };
}

describe('parallel gzip (pigz-style pieces in one gzip member)', () => {
  it('inflates to exactly the input, for sizes around the split points and any number of threads', async () => {
    for (const size of [0, 1, 1023, 1024 * 1024 - 1, 1024 * 1024 + 1, 3 * 1024 * 1024 + 7, 9 * 1024 * 1024]) {
      const input = snapshotLike(size);
      for (const threads of [1, 2, 3, 4, 7]) {
        const gz = await compress(input, 'gzip', threads);
        expect(gunzipSync(gz).equals(input), `${size} bytes on ${threads} threads`).toBe(true);
      }
    }
  });

  it('incompressible input and every zlib level round-trip too', async () => {
    const random = Buffer.from(crypto.getRandomValues(new Uint8Array(65536)));
    const input = Buffer.concat(Array.from({ length: 40 }, () => random.subarray(0, 65536 - Math.floor(Math.random() * 100))));
    for (const level of [0, 1, 6, 9]) expect(gunzipSync(await compress(input, 'gzip', 4, level)).equals(input)).toBe(true);
  });

  it('is one gzip member (not concatenated members), which decoders that stop at the first member read whole', async (ctx) => {
    if (!python) ctx.skip();
    const input = snapshotLike(6 * 1024 * 1024);
    const gz = await compress(input, 'gzip', 4);
    const r = pythonInflatesOneMember(gz);
    expect(r.eof).toBe(true);
    expect(r.unused).toBe(0);
    expect(r.data.equals(input)).toBe(true);
  });

  it('compresses as well as one zlib call, within a few percent, on a snapshot-like message', async () => {
    const input = snapshotLike(8 * 1024 * 1024);
    const one = (await compress(input, 'gzip', 1)).length;
    const four = (await compress(input, 'gzip', 4)).length;
    expect(four).toBeLessThan(input.length / 1.5);
    expect(four / one).toBeLessThan(1.03);
  });

  it('deflate (grpc-encoding deflate) is the zlib format', async () => {
    const input = snapshotLike(2 * 1024 * 1024);
    expect(inflateSync(await compress(input, 'deflate', 4)).equals(input)).toBe(true);
  });
});
