import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileSeal } from './file-seal.ts';
import { createLastPushStore } from './last-push-store.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-last-push-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const KEY = randomBytes(32);
const storeIn = (dir: string, maxBytes = 64 * 1024 * 1024, warnings: string[] = [], key = KEY) =>
  createLastPushStore({ dir, maxBytes, seal: fileSeal(key), warn: (_err, msg) => warnings.push(msg) });
const NOW = Date.parse('2026-12-01T12:00:00Z');
const files = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.lpm'));

describe('last pushes kept on disk (grpc.last_push_disk_mb)', () => {
  it('a new process over the same directory finds the message of exactly the revision asked, byte for byte', async () => {
    const dir = tempDir();
    const message = randomBytes(300_000);
    const before = storeIn(dir);
    before.put('nod_a', 7, Number.POSITIVE_INFINITY, message);
    await before.flush();
    const after = storeIn(dir);
    expect((await after.get('nod_a', 7, NOW))?.bytes.equals(message)).toBe(true);
    expect(await after.get('nod_a', 6, NOW)).toBeUndefined();
    expect(await after.get('nod_a', 8, NOW)).toBeUndefined();
    expect(await after.get('nod_b', 7, NOW)).toBeUndefined();
  });

  it('a message is not used from the moment its content stops holding (untilMs: a member’s expiry) on', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    store.put('nod_a', 3, NOW + 60_000, randomBytes(1000));
    await store.flush();
    expect(await store.get('nod_a', 3, NOW + 59_999)).toBeDefined();
    expect(await store.get('nod_a', 3, NOW + 60_000)).toBeUndefined();
  });

  it('the newest of puts made while a write runs is the one kept; one file per node', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    const last = randomBytes(2000);
    for (let r = 1; r <= 5; r++) store.put('nod_a', r, Number.POSITIVE_INFINITY, r === 5 ? last : randomBytes(2000));
    await store.flush();
    expect((await storeIn(dir).get('nod_a', 5, NOW))?.bytes.equals(last)).toBe(true);
    expect(files(dir)).toHaveLength(1);
  });

  it('a file holds no run of the message in clear, opens only under the installation’s key, and only as the file of its node', async () => {
    const dir = tempDir();
    const message = Buffer.from('vless-uuid-0123456789abcdef '.repeat(2000));
    const store = storeIn(dir);
    store.put('nod_a', 4, Number.POSITIVE_INFINITY, message);
    store.put('nod_b', 4, Number.POSITIVE_INFINITY, randomBytes(100));
    await store.flush();
    const path = (id: string) => join(dir, `${Buffer.from(id).toString('base64url')}.lpm`);
    const onDisk = readFileSync(path('nod_a'));
    expect(onDisk.includes(Buffer.from('vless-uuid'))).toBe(false);
    expect(await storeIn(dir, undefined, [], randomBytes(32)).get('nod_a', 4, NOW)).toBeUndefined();
    // nod_a's file put where nod_b's was.
    writeFileSync(path('nod_b'), onDisk);
    expect(await storeIn(dir).get('nod_b', 4, NOW)).toBeUndefined();
    // Its head says another revision: the head is sealed with the bytes.
    const moved = Buffer.from(onDisk);
    moved.writeBigUInt64LE(5n, 8);
    writeFileSync(path('nod_a'), moved);
    expect(await storeIn(dir).get('nod_a', 5, NOW)).toBeUndefined();
  });

  it('a node’s newest message is written once it stays unchanged for quietMs, or has waited maxWaitMs; flush writes what waits at once', async () => {
    const dir = tempDir();
    const store = createLastPushStore({ dir, maxBytes: 1 << 30, seal: fileSeal(KEY), warn: () => {}, quietMs: 80, maxWaitMs: 300 });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Three changes inside the quiet time: one write, of the last.
    for (let r = 1; r <= 3; r++) store.put('nod_a', r, Number.POSITIVE_INFINITY, randomBytes(500));
    await sleep(40);
    expect(store.stats().written).toBe(0);
    await sleep(200);
    expect(store.stats().written).toBe(1);
    expect(await store.get('nod_a', 3, NOW)).toBeDefined();
    // A change every 30 ms, never quiet for 80: written by maxWaitMs all the same.
    for (let r = 4; r <= 16; r++) {
      store.put('nod_a', r, Number.POSITIVE_INFINITY, randomBytes(500));
      await sleep(30);
    }
    expect(store.stats().written).toBeGreaterThanOrEqual(2);
    // The last one still waits; a stop writes it.
    store.put('nod_a', 17, Number.POSITIVE_INFINITY, randomBytes(500));
    await store.flush();
    expect(await store.get('nod_a', 17, NOW)).toBeDefined();
  });

  it('the gzip the send made of a message waiting to be written is kept with it, for its revision only; a gzip part that does not open is left out', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    const message = randomBytes(4000);
    const gzipped = randomBytes(1000);
    store.put('nod_a', 2, Number.POSITIVE_INFINITY, message);
    store.putGzip('nod_a', 1, 1, randomBytes(1000)); // an older revision's: ignored
    store.putGzip('nod_a', 2, 1, gzipped);
    await store.flush();
    const found = await storeIn(dir).get('nod_a', 2, NOW);
    expect(found?.bytes.equals(message)).toBe(true);
    expect(found?.gzip?.level).toBe(1);
    expect(found?.gzip?.bytes.equals(gzipped)).toBe(true);
    // Written already: a late gzip is not attached to anything.
    store.putGzip('nod_a', 2, 6, randomBytes(10));
    await store.flush();
    expect((await storeIn(dir).get('nod_a', 2, NOW))?.gzip?.level).toBe(1);
    // The gzip part damaged: the message alone.
    const path = join(dir, `${Buffer.from('nod_a').toString('base64url')}.lpm`);
    const bytes = readFileSync(path);
    bytes[bytes.length - 5] = (bytes[bytes.length - 5] as number) ^ 0x10;
    writeFileSync(path, bytes);
    const alone = await storeIn(dir).get('nod_a', 2, NOW);
    expect(alone?.bytes.equals(message)).toBe(true);
    expect(alone?.gzip).toBeUndefined();
  });

  it('a damaged, torn or foreign file is not used; a temporary file a stopped process left is removed', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    for (const id of ['nod_flip', 'nod_torn', 'nod_head']) store.put(id, 1, Number.POSITIVE_INFINITY, randomBytes(5000));
    await store.flush();
    const path = (id: string) => join(dir, `${Buffer.from(id).toString('base64url')}.lpm`);
    const flipped = readFileSync(path('nod_flip'));
    flipped[flipped.length - 10] = (flipped[flipped.length - 10] as number) ^ 0x01;
    writeFileSync(path('nod_flip'), flipped);
    writeFileSync(path('nod_torn'), readFileSync(path('nod_torn')).subarray(0, 4000));
    const foreign = readFileSync(path('nod_head'));
    foreign.writeUInt32LE(9, 4); // another format
    writeFileSync(path('nod_head'), foreign);
    writeFileSync(`${path('nod_flip')}.999.0.tmp`, 'half');

    const again = storeIn(dir);
    for (const id of ['nod_flip', 'nod_torn', 'nod_head']) expect(await again.get(id, 1, NOW), id).toBeUndefined();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('holds at most maxBytes, the least recently written removed first; a message larger than the bound is not written', async () => {
    const dir = tempDir();
    const bound = 100_000;
    const store = storeIn(dir, bound);
    for (let k = 0; k < 8; k++) {
      store.put(`nod_${k}`, 1, Number.POSITIVE_INFINITY, randomBytes(20_000));
      await store.flush();
    }
    store.put('nod_huge', 1, Number.POSITIVE_INFINITY, randomBytes(bound + 1));
    await store.flush();
    const held = files(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    expect(held).toBeLessThanOrEqual(bound);
    expect(await store.get('nod_7', 1, NOW)).toBeDefined();
    expect(await store.get('nod_0', 1, NOW)).toBeUndefined();
    expect(await store.get('nod_huge', 1, NOW)).toBeUndefined();
  });

  it('node ids become file names of [A-Za-z0-9_-] only, whatever they hold', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    const id = '../../etc/passwd\u0000 é';
    const message = randomBytes(100);
    store.put(id, 1, Number.POSITIVE_INFINITY, message);
    await store.flush();
    expect(files(dir).every((f) => /^[A-Za-z0-9_-]+\.lpm$/.test(f))).toBe(true);
    expect((await storeIn(dir).get(id, 1, NOW))?.bytes.equals(message)).toBe(true);
  });

  it('a directory it cannot use is logged once and every read is a miss', async () => {
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const warnings: string[] = [];
    const store = storeIn(join(blocker, 'last-push'), 1 << 30, warnings);
    store.put('nod_a', 1, Number.POSITIVE_INFINITY, randomBytes(100));
    await store.flush();
    expect(await store.get('nod_a', 1, NOW)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('not kept on disk');
  });
});
