import { describe, expect, it } from 'vitest';
import { groupModels } from './group-models.ts';
import { type KeptBucket, MemberCache } from './member-cache.ts';
import type { ModelSubscription } from './model.ts';

// groupModels may reuse models and keep an order between snapshots; what it returns must
// always be exactly the group's members now, each once, with the inbound list asked for.

interface Row {
  id: string;
  cred: string;
}
const model =
  (inbound_ids: string[]) =>
  (r: Row): ModelSubscription => ({
    id: r.id,
    status: 'active',
    traffic_limit_bytes: null,
    expires_at: null,
    client_status: 'active',
    vless_uuid: r.cred,
    vmess_uuid: '',
    trojan_password: '',
    shadowsocks_password: '',
    inbound_ids,
  });

/** Deterministic pseudo-random numbers in [0, 1) from a seed. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe('groupModels: the members of a group, made once per chunk and kept in id order', () => {
  it('after chunks change, go and come over many snapshots: exactly the members now, in id order when kept', () => {
    const cache = new MemberCache<Row>({ maxRows: 100_000, minGroupRows: 1 });
    const next = random(7);
    const rowsOf = (bucket: number, generation: number): Row[] =>
      Array.from({ length: 1 + Math.floor(next() * 30) }, (_, k) => ({
        id: `sub_${String(bucket).padStart(3, '0')}_${generation}_${k}`,
        cred: `c${generation}`,
      }));
    let buckets = new Map<number, KeptBucket<Row>>();
    for (let b = 0; b < 64; b++) buckets.set(b, { count: 0, sum: '0', rows: rowsOf(b, 0) });
    const granted = ['inb_a', 'inb_b'];
    for (let snapshot = 1; snapshot <= 40; snapshot++) {
      cache.keep('grp', 'vless', buckets);
      const chunks = [...buckets.values()].map((b) => b.rows);
      const got = groupModels(chunks, granted.join('\n'), model(granted), { cache, groupId: 'grp' });
      const expected = chunks
        .flat()
        .map((r) => `${r.id} ${r.cred}`)
        .sort();
      expect(
        got.map((m) => `${m.id} ${m.vless_uuid}`),
        `snapshot ${snapshot}`,
      ).toEqual(expected);
      expect(got.every((m) => m.inbound_ids.join() === granted.join())).toBe(true);
      // The next snapshot: a few buckets change (members in, out, credentials rotated), one empties, one comes back.
      const changed = new Map(buckets);
      for (let k = 0; k < 1 + Math.floor(next() * 4); k++)
        changed.set(Math.floor(next() * 64), { count: 0, sum: '0', rows: rowsOf(k, snapshot) });
      if (snapshot % 7 === 0) changed.delete(Math.floor(next() * 64));
      if (snapshot % 11 === 0) for (let b = 0; b < 64; b++) changed.set(b, { count: 0, sum: '0', rows: rowsOf(b, snapshot) });
      // A bucket read again with most of its rows unchanged: the kept row objects, one replaced, one come (read-members.ts).
      if (snapshot % 3 === 0) {
        const b = Math.floor(next() * 64);
        const rows = [...(changed.get(b)?.rows ?? [])];
        if (rows.length) rows[Math.floor(next() * rows.length)] = { id: `sub_${b}_re_${snapshot}`, cred: 'fresh' };
        rows.push({ id: `sub_${b}_came_${snapshot}`, cred: 'came' });
        changed.set(b, { count: 0, sum: '0', rows });
      }
      buckets = changed;
    }
  });

  it('an unchanged group gives the same models again; another inbound list gets its own models and the same members', () => {
    const cache = new MemberCache<Row>({ maxRows: 1_000, minGroupRows: 1 });
    const buckets = new Map<number, KeptBucket<Row>>([
      [
        1,
        {
          count: 2,
          sum: '0',
          rows: [
            { id: 'sub_b', cred: 'x' },
            { id: 'sub_a', cred: 'y' },
          ],
        },
      ],
      [2, { count: 1, sum: '0', rows: [{ id: 'sub_c', cred: 'z' }] }],
    ]);
    cache.keep('grp', 'vless', buckets);
    const chunks = [...buckets.values()].map((b) => b.rows);
    const first = groupModels(chunks, 'inb_a', model(['inb_a']), { cache, groupId: 'grp' });
    expect(first.map((m) => m.id)).toEqual(['sub_a', 'sub_b', 'sub_c']);
    const again = groupModels(chunks, 'inb_a', model(['inb_a']), { cache, groupId: 'grp' });
    expect(again[0]).toBe(first[0]);
    const other = groupModels(chunks, 'inb_x', model(['inb_x']), { cache, groupId: 'grp' });
    expect(other.map((m) => m.id).sort()).toEqual(['sub_a', 'sub_b', 'sub_c']);
    expect(other.every((m) => m.inbound_ids[0] === 'inb_x')).toBe(true);
    const back = groupModels(chunks, 'inb_a', model(['inb_a']), { cache, groupId: 'grp' });
    expect(back.map((m) => `${m.id} ${m.inbound_ids[0]}`)).toEqual(['sub_a inb_a', 'sub_b inb_a', 'sub_c inb_a']);
    // Without a cache: the members, made from the rows, in the order read.
    expect(groupModels(chunks, 'inb_a', model(['inb_a'])).map((m) => m.id)).toEqual(['sub_b', 'sub_a', 'sub_c']);
  });
});

describe('groupModels: a bucket read again', () => {
  it('keeps the models of the rows it hands again (the kept row objects), makes new ones for the rows that changed', () => {
    const cache = new MemberCache<Row>({ maxRows: 1_000, minGroupRows: 1 });
    const rows = Array.from({ length: 10 }, (_, k) => ({ id: `sub_${k}`, cred: 'old' }));
    const other = [{ id: 'sub_z', cred: 'z' }];
    cache.keep(
      'grp',
      'vless',
      new Map([
        [1, { count: 10, sum: '0', rows }],
        [2, { count: 1, sum: '0', rows: other }],
      ]),
    );
    const make = model(['inb_a']);
    const first = groupModels([rows, other], 'inb_a', make, { cache, groupId: 'grp' });
    // Read again: sub_3 changed (a new row), the others are the kept rows.
    const again = rows.map((r) => (r.id === 'sub_3' ? { id: 'sub_3', cred: 'rotated' } : r));
    cache.keep(
      'grp',
      'vless',
      new Map([
        [1, { count: 10, sum: '1', rows: again }],
        [2, { count: 1, sum: '0', rows: other }],
      ]),
    );
    const next = groupModels([again, other], 'inb_a', make, { cache, groupId: 'grp' });
    expect(next.map((m) => `${m.id} ${m.vless_uuid}`)).toEqual([
      ...rows.map((r) => `${r.id} ${r.id === 'sub_3' ? 'rotated' : 'old'}`),
      'sub_z z',
    ]);
    for (const [k, m] of next.entries()) {
      if (m.id === 'sub_3') expect(m).not.toBe(first[k]);
      else expect(m).toBe(first[k]);
    }
  });
});

describe('groupModels with the order a whole read came in', () => {
  /** A group of `n` members read in `order`, in 16 chunks by a hash of the id (as the member cache buckets them). */
  function readWhole(n: number, order: 'ascending' | 'shuffled', seed = 3) {
    const rows: Array<Row & { chunk: number }> = Array.from({ length: n }, (_, i) => ({
      id: `sub_${String(i).padStart(6, '0')}`,
      cred: `c${i}`,
      chunk: (i * 2654435761) % 16,
    }));
    if (order === 'shuffled') {
      const next = random(seed);
      for (let i = rows.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [rows[i], rows[j]] = [rows[j] as (typeof rows)[number], rows[i] as (typeof rows)[number]];
      }
    }
    const chunks: Array<Array<(typeof rows)[number]>> = Array.from({ length: 16 }, () => []);
    for (const r of rows) chunks[r.chunk]?.push(r);
    return { rows, chunks };
  }

  for (const order of ['ascending', 'shuffled'] as const)
    it(`gives the members in id order, each once, whatever the read order (${order})`, () => {
      const { rows, chunks } = readWhole(5_000, order);
      const cache = new MemberCache<Row & { chunk: number }>({ maxRows: 100_000, minGroupRows: 1 });
      const buckets = new Map(chunks.map((c, k) => [k, { count: c.length, sum: '0', rows: c }]));
      cache.keep('grp', 'vless', buckets);
      const got = groupModels<Row & { chunk: number }>(
        chunks,
        'inb_a',
        model(['inb_a']),
        { cache, groupId: 'grp' },
        { rows, chunkIndex: (r) => r.chunk },
      );
      expect(got.map((m) => m.id)).toEqual(rows.map((r) => r.id).sort());
    });

  it('falls back to the chunks when the read order does not match them (a row missing, or in another chunk)', () => {
    const { rows, chunks } = readWhole(2_000, 'ascending');
    type ChunkRow = (typeof rows)[number];
    for (const read of [
      { rows: rows.slice(1), chunkIndex: (r: (typeof rows)[number]) => r.chunk },
      { rows, chunkIndex: (r: (typeof rows)[number]) => (r.chunk + 1) % 16 },
      { rows, chunkIndex: () => 99 },
    ]) {
      const cache = new MemberCache<ChunkRow>({ maxRows: 100_000, minGroupRows: 1 });
      cache.keep('grp', 'vless', new Map(chunks.map((c, k) => [k, { count: c.length, sum: '0', rows: c }])));
      const got = groupModels(chunks, 'inb_a', model(['inb_a']), { cache, groupId: 'grp' }, read);
      expect(got.map((m) => m.id)).toEqual(rows.map((r) => r.id).sort());
    }
  });
});
