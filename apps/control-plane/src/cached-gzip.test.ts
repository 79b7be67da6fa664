import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { userEmail } from '@svc/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { compressedBytes, createCachedGzip } from './cached-gzip.ts';
import { contentCuts, DEFAULT_CUTS } from './content-cuts.ts';
import { fileSeal } from './file-seal.ts';
import { createGzipPieceStore } from './gzip-piece-store.ts';

/** A UUID-shaped id fixed by the index: the same bytes in every run, so the cuts are too. */
const fixedUuid = (i: number) => {
  const h = createHash('sha256').update(String(i)).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** Protobuf-like user runs: what the users of a big inbound look like on the wire. */
function users(from: number, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(`\x3a\x40\x0a\x1e${userEmail(`sub_${String(from + i).padStart(26, '0')}`)}\x52\x24${fixedUuid(from + i)}`),
  );
}

const run = (gz: ReturnType<typeof createCachedGzip>, bytes: Uint8Array, level = 1) =>
  new Promise<Buffer>((resolve, reject) =>
    gz.compress(bytes, 'gzip', level, (err, out) => (err || !out ? reject(err) : resolve(compressedBytes(out)))),
  );

const python = existsSync('/usr/bin/python3');

describe('content-defined cuts', () => {
  it('pieces are within [min, max] and cover the input exactly', () => {
    const input = Buffer.concat(users(0, 60_000));
    const cuts = contentCuts(input);
    expect(cuts.at(-1)).toBe(input.length);
    let start = 0;
    for (const [k, cut] of cuts.entries()) {
      if (k < cuts.length - 1) expect(cut - start).toBeGreaterThanOrEqual(DEFAULT_CUTS.min);
      expect(cut - start).toBeLessThanOrEqual(DEFAULT_CUTS.max);
      start = cut;
    }
    expect(contentCuts(new Uint8Array(0))).toEqual([]);
  });

  it('a change in one place leaves every piece after the next cut byte-identical (cuts follow content, not offsets)', () => {
    const list = users(0, 60_000);
    const before = Buffer.concat(list);
    const after = Buffer.concat([Buffer.from('\x08\x07longer prefix'), ...list.slice(0, 30_000), ...list.slice(30_001)]);
    const pieces = (b: Buffer) => {
      let s = 0;
      return contentCuts(b).map((c) => {
        const p = b.subarray(s, c).toString('latin1');
        s = c;
        return p;
      });
    };
    const old = new Set(pieces(before));
    const now = pieces(after);
    const changed = now.filter((p) => !old.has(p));
    expect(now.length).toBeGreaterThan(40);
    // Two changes (a longer prefix, one user gone): the piece holding each, and at most two
    // more after it while a cut skipped for falling within `min` of the moved start resyncs.
    // Cuts by offset would change every piece after the prefix (all of the > 40).
    expect(changed.length).toBeLessThanOrEqual(6);
  });
});

describe('cached gzip (deflated pieces kept between pushes)', () => {
  it('inflates to exactly the input, cold and warm, at every level', async () => {
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024 });
    const input = Buffer.concat(users(0, 40_000));
    for (const level of [1, 6, 9]) {
      expect(gunzipSync(await run(gz, input, level)).equals(input)).toBe(true);
      expect(gunzipSync(await run(gz, input, level)).equals(input)).toBe(true);
    }
    const small = Buffer.from('tiny message');
    expect(gunzipSync(await run(gz, small)).equals(small)).toBe(true);
  });

  it('a one-user change deflates only the pieces that changed, and the result is the new message', async () => {
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024 });
    const list = users(0, 100_000);
    const first = Buffer.concat([Buffer.from('\x0a\x05rev-1'), ...list]);
    await run(gz, first);
    const cold = gz.stats();
    expect(cold.hits).toBe(0);
    expect(cold.misses).toBeGreaterThan(50);
    const second = Buffer.concat([Buffer.from('\x0a\x05rev-2'), ...list.slice(0, 50_000), ...list.slice(50_001)]);
    const out = await run(gz, second);
    expect(gunzipSync(out).equals(second)).toBe(true);
    const warm = gz.stats();
    expect(warm.misses - cold.misses).toBeLessThanOrEqual(4);
    expect(warm.hits).toBeGreaterThan(cold.misses - 5);
  });

  it('level is part of a piece’s key (a piece deflated at one level is not served for another)', async () => {
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024 });
    const input = Buffer.concat(users(0, 30_000));
    await run(gz, input, 1);
    const after1 = gz.stats();
    await run(gz, input, 9);
    expect(gz.stats().hits).toBe(after1.hits);
  });

  it('holds at most cacheBytes of deflated pieces, the least recently used dropped first', async () => {
    const budget = 512 * 1024;
    const gz = createCachedGzip({ cacheBytes: budget });
    for (let k = 0; k < 4; k++) await run(gz, Buffer.concat(users(k * 50_000, 30_000)));
    expect(gz.stats().heldBytes).toBeLessThanOrEqual(budget);
    expect(gz.stats().heldPieces).toBeGreaterThan(0);
    const off = createCachedGzip({ cacheBytes: 0 });
    const input = Buffer.concat(users(0, 30_000));
    expect(gunzipSync(await run(off, input)).equals(input)).toBe(true);
    expect(off.stats().heldPieces).toBe(0);
  });

  it('is one gzip member that an independent decoder (Python zlib) reads whole', async (ctx) => {
    if (!python) ctx.skip();
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024 });
    const input = Buffer.concat(users(0, 50_000));
    await run(gz, input);
    const out = await run(gz, input);
    const r = JSON.parse(
      execFileSync(
        '/usr/bin/python3',
        [
          '-c',
          'import sys, zlib, json, hashlib\nd = zlib.decompressobj(16 + zlib.MAX_WBITS)\nraw = d.decompress(sys.stdin.buffer.read())\nprint(json.dumps({"sha": hashlib.sha256(raw).hexdigest(), "eof": d.eof, "unused": len(d.unused_data)}))',
        ],
        { input: out, maxBuffer: 64 * 1024 * 1024 },
      ).toString(),
    ) as { sha: string; eof: boolean; unused: number };
    expect(r).toEqual({ sha: (await import('node:crypto')).createHash('sha256').update(input).digest('hex'), eof: true, unused: 0 });
  });

  it('compresses within a few percent of one zlib call', async () => {
    const input = Buffer.concat(users(0, 100_000));
    const pieces = (await run(createCachedGzip({ cacheBytes: 64 * 1024 * 1024 }), input)).length;
    const whole = (await import('node:zlib')).gzipSync(input, { level: 1 }).length;
    expect(pieces / whole).toBeLessThan(1.05);
  });
});

describe('gzip pieces kept on disk (grpc.gzip_disk_mb): a restarted gateway deflates only what changed', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-gzip-pieces-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const warnings: string[] = [];
  const key = randomBytes(32);
  const storeIn = (dir: string, maxBytes = 64 * 1024 * 1024, sealKey = key) =>
    createGzipPieceStore({ dir, maxBytes, seal: fileSeal(sealKey), warn: (_err, msg) => warnings.push(msg) });

  it('a new process over the same directory takes every piece from disk, deflates none, and sends the same bytes', async () => {
    const dir = tempDir();
    const input = Buffer.concat([Buffer.from('\x0a\x05rev-1'), ...users(0, 60_000)]);
    const before = storeIn(dir);
    const first = await run(createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: before }), input);
    await before.flush();
    expect(before.stats().written).toBeGreaterThan(20);

    // The gateway restarted: an empty memory cache, the same directory.
    const after = storeIn(dir);
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: after });
    const again = await run(gz, input);
    expect(again.equals(first)).toBe(true);
    expect(gunzipSync(again).equals(input)).toBe(true);
    expect(gz.stats()).toMatchObject({ misses: 0, stored: before.stats().written });

    // A change while it was down: only the pieces around it are deflated.
    const changed = Buffer.concat([Buffer.from('\x0a\x05rev-2'), ...users(0, 30_000), ...users(30_001, 29_999)]);
    const fresh = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: storeIn(dir) });
    expect(gunzipSync(await run(fresh, changed)).equals(changed)).toBe(true);
    expect(fresh.stats().misses).toBeLessThanOrEqual(4);
    expect(warnings).toEqual([]);
  });

  it('a piece on disk holds nothing of the message in clear and opens only under the installation’s key', async () => {
    const dir = tempDir();
    const input = Buffer.concat(users(0, 40_000));
    const store = storeIn(dir);
    await run(createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store }), input);
    await store.flush();
    const files = readdirSync(dir).filter((f) => f.endsWith('.gzp'));
    expect(files.length).toBeGreaterThan(3);
    // No offset of a file inflates to the users' text (unsealed, the deflated bytes sat at 0 or after a digest).
    for (const f of files) {
      const bytes = readFileSync(join(dir, f));
      for (const at of [0, 28, 32]) {
        let text = '';
        try {
          text = inflateRawSync(bytes.subarray(at), { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
        } catch {}
        expect(text.includes('@svc')).toBe(false);
      }
    }
    const stranger = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: storeIn(dir, undefined, randomBytes(32)) });
    expect(gunzipSync(await run(stranger, input)).equals(input)).toBe(true);
    expect(stranger.stats()).toMatchObject({ stored: 0, misses: files.length });
  });

  it('a damaged or torn piece file is not used: the piece is deflated again and the file replaced', async () => {
    const dir = tempDir();
    const input = Buffer.concat(users(0, 40_000));
    const store = storeIn(dir);
    await run(createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store }), input);
    await store.flush();
    const files = readdirSync(dir).filter((f) => f.endsWith('.gzp'));
    expect(files.length).toBeGreaterThan(3);
    const [flipped, torn, emptied] = files.map((f) => join(dir, f));
    const bytes = readFileSync(flipped as string);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 0xff;
    writeFileSync(flipped as string, bytes);
    writeFileSync(torn as string, readFileSync(torn as string).subarray(0, 40));
    writeFileSync(emptied as string, Buffer.alloc(0));
    // A write a stopped process left half done.
    writeFileSync(`${flipped as string}.999.0.tmp`, 'half');

    const again = storeIn(dir);
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: again });
    expect(gunzipSync(await run(gz, input)).equals(input)).toBe(true);
    expect(gz.stats().misses).toBe(3);
    await again.flush();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // Written anew: a third process finds every piece.
    const third = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store: storeIn(dir) });
    expect(gunzipSync(await run(third, input)).equals(input)).toBe(true);
    expect(third.stats().misses).toBe(0);
  });

  it('holds at most maxBytes on disk, the oldest written removed first', async () => {
    const dir = tempDir();
    const bound = 600 * 1024;
    const store = storeIn(dir, bound);
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store });
    for (let k = 0; k < 4; k++) {
      await run(gz, Buffer.concat(users(k * 50_000, 30_000)));
      await store.flush();
    }
    const onDisk = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    expect(onDisk).toBeLessThanOrEqual(bound);
    expect(onDisk).toBeGreaterThan(0);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a directory it cannot use is logged once and the gateway deflates as without the store', async () => {
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const seen: string[] = [];
    const store = createGzipPieceStore({
      dir: join(blocker, 'gzip-pieces'),
      maxBytes: 1 << 30,
      seal: fileSeal(key),
      warn: (_e, msg) => seen.push(msg),
    });
    const gz = createCachedGzip({ cacheBytes: 64 * 1024 * 1024, store });
    const input = Buffer.concat(users(0, 40_000));
    expect(gunzipSync(await run(gz, input)).equals(input)).toBe(true);
    await store.flush();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('not kept on disk');
  });
});
