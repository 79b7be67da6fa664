import { mayBeDueSlices, statusClockChangesAt, storedStatusAsOf, subscriptionServes } from '@svc/domain';
import { userEmail } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import { dueSlicesOf } from './due-slices.ts';
import { groupModels } from './group-models.ts';
import { type KeptBucket, MemberCache } from './member-cache.ts';
import type { ModelSlice, ModelSubscription } from './model.ts';
import { servingMembersOf } from './serving-members.ts';

// What the compiler derives from a node's members and the clock is kept with the members array
// and brought up to date from the array before it when group-models.ts made one from the other.
// Whatever the changes and the clock do, it must be exactly what deriving from scratch gives.

interface Row {
  id: string;
  status: ModelSubscription['status'];
  client_status: ModelSubscription['client_status'];
  expires_ms: number | null;
  limit: number | null;
  device: number | null;
}

const T0 = Date.UTC(2026, 10, 1);

/** Deterministic pseudo-random numbers in [0, 1) from a seed. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

const STATUSES: ModelSubscription['status'][] = ['active', 'active', 'active', 'active', 'limited', 'disabled', 'expired'];

/** The rule written out plainly: who serves at `now` in email order, the limited ones in id order, the earliest expiry ahead. */
function reference(members: readonly ModelSubscription[], now: Date) {
  const serving = members.filter((s) => subscriptionServes(storedStatusAsOf(s, now), s.client_status));
  const emails = serving.map((s) => userEmail(s.id)).sort();
  const limited = serving
    .filter(
      (s) =>
        s.device_limit != null || s.upload_bps != null || s.download_bps != null || s.expires_at !== null || s.traffic_limit_bytes !== null,
    )
    .map((s) => s.id)
    .sort();
  const ahead = serving.map((s) => statusClockChangesAt(s, now)).filter((t): t is number => t !== null);
  return { emails, limited, untilMs: Math.min(Number.POSITIVE_INFINITY, ...ahead) };
}

const view = (d: ReturnType<typeof servingMembersOf>) => ({
  emails: d.serving.map((m) => m.email),
  limited: d.limited.map((s) => s.id),
  untilMs: d.untilMs,
});

describe('servingMembersOf and dueSlicesOf: kept with the members array, brought up to date by the changes', () => {
  it('over many snapshots of changes, members going and coming and the clock moving on (and back): exactly what deriving from scratch gives', () => {
    const next = random(11);
    const cache = new MemberCache<Row>({ maxRows: 100_000, minGroupRows: 1 });
    let serial = 0;
    const row = (): Row => ({
      id: `sub_${String(serial++).padStart(6, '0')}`,
      status: STATUSES[Math.floor(next() * STATUSES.length)] as Row['status'],
      client_status: next() < 0.95 ? 'active' : 'disabled',
      expires_ms: next() < 0.5 ? T0 + Math.floor(next() * 600) * 1000 : null,
      limit: next() < 0.5 ? 10 ** 9 : null,
      device: next() < 0.2 ? 2 : null,
    });
    // The inbound list a member is made with: one array per snapshot, as subscriptionsOfNode hands
    // (equal ids in another array for members kept from before), and now and then another list.
    let granted = ['inb_a', 'inb_b'];
    const make = (r: Row): ModelSubscription => ({
      id: r.id,
      status: r.status,
      traffic_limit_bytes: r.limit,
      expires_at: r.expires_ms === null ? null : new Date(r.expires_ms),
      device_limit: r.device,
      client_status: r.client_status,
      vless_uuid: r.id,
      vmess_uuid: '',
      trojan_password: '',
      shadowsocks_password: '',
      inbound_ids: r.id.endsWith('7') && serial > 1500 ? ['inb_a'] : granted,
      source: r,
    });
    let buckets = new Map<number, KeptBucket<Row>>();
    for (let b = 0; b < 32; b++) buckets.set(b, { count: 0, sum: '0', rows: Array.from({ length: 40 }, row) });
    let clock = T0 - 10_000;
    let before: { models: readonly ModelSubscription[]; serving: ReturnType<typeof servingMembersOf> } | undefined;
    let reusedSnapshots = 0;
    // A node's slices: most members with a traffic limit have one; a few are half used.
    const slices = new Map<string, ModelSlice>();
    const halfUsed = new Set<string>();
    for (let snapshot = 1; snapshot <= 120; snapshot++) {
      cache.keep('grp', 'vless', buckets);
      const chunks = [...buckets.values()].map((b) => b.rows);
      granted = [...granted];
      const models = groupModels(chunks, 'inb_a\ninb_b', make, { cache, groupId: 'grp' });
      // Two nodes' snapshots at the same clock, the second as a fan-out would (same array).
      for (const now of [new Date(clock), new Date(clock)]) {
        const got = servingMembersOf(models, now);
        expect(view(got), `snapshot ${snapshot}`).toEqual(reference(models, now));
        // The same from an array nothing is kept with.
        expect(view(servingMembersOf([...models], now))).toEqual(reference(models, now));
        const lists = new Set(got.serving.map((m) => m.sub.inbound_ids.join()));
        expect(got.sharedInboundIds?.join() ?? null, `shared list, snapshot ${snapshot}`).toBe(lists.size === 1 ? [...lists][0] : null);
        const node = { multiplier: 1, slices, halfUsed };
        expect(new Set(dueSlicesOf(models, node, now)), `due, snapshot ${snapshot}`).toEqual(new Set(mayBeDueSlices(models, node, now)));
        expect(dueSlicesOf(models, { ...node, multiplier: 0 }, now)).toEqual([]);
      }
      const got = servingMembersOf(models, new Date(clock));
      // Brought up to date rather than derived again: the members still serving are the entries made before.
      if (before && before.models !== models && got.serving.length > 10) {
        const earlier = new Map(before.serving.serving.map((m) => [m.sub, m]));
        const kept = got.serving.filter((m) => earlier.get(m.sub) === m).length;
        if (kept > got.serving.length / 2) reusedSnapshots++;
      }
      before = { models, serving: got };

      // The clock: mostly forward by seconds (expiries pass), now and then a jump or a step back.
      const r = next();
      clock += r < 0.8 ? Math.floor(next() * 8000) : r < 0.9 ? 120_000 : -30_000;
      // Slices granted and half used now and then (a new map when they change, as read-slices.ts makes).
      if (snapshot % 9 === 0) {
        const all = [...buckets.values()].flatMap((b) => b.rows);
        for (const x of all) if (x.limit !== null && next() < 0.3) slices.set(x.id, { slice_id: String(snapshot), slice_bytes: '100' });
        halfUsed.clear();
        for (const x of all) if (slices.has(x.id) && next() < 0.05) halfUsed.add(x.id);
      }
      // Changes: mostly one member of one bucket replaced (a PATCH), sometimes more, now and then everything.
      const changed = new Map(buckets);
      const n = next() < 0.7 ? 1 : 1 + Math.floor(next() * 6);
      for (let k = 0; k < n; k++) {
        const b = Math.floor(next() * 32);
        const rows = [...(changed.get(b)?.rows ?? [])];
        const what = next();
        if (what < 0.5 && rows.length) {
          const at = Math.floor(next() * rows.length);
          const old = rows[at] as Row;
          // The same subscription changed: a new row object with the same id.
          rows[at] = { ...old, status: STATUSES[Math.floor(next() * STATUSES.length)] as Row['status'], device: next() < 0.5 ? 3 : null };
        } else if (what < 0.75) rows.push(row());
        else if (rows.length) rows.splice(Math.floor(next() * rows.length), 1);
        changed.set(b, { count: 0, sum: '0', rows });
      }
      if (snapshot % 37 === 0) for (let b = 0; b < 32; b++) changed.set(b, { count: 0, sum: '0', rows: Array.from({ length: 40 }, row) });
      buckets = changed;
    }
    // Most snapshots were brought up to date from the one before (the path under test ran).
    expect(reusedSnapshots).toBeGreaterThan(60);
  });

  it('a member whose expiry ended what was kept goes: the next earliest expiry is found again', () => {
    const sub = (id: string, expiresInS: number | null): ModelSubscription => ({
      id,
      status: 'active',
      traffic_limit_bytes: null,
      expires_at: expiresInS === null ? null : new Date(T0 + expiresInS * 1000),
      client_status: 'active',
      vless_uuid: id,
      vmess_uuid: '',
      trojan_password: '',
      shadowsocks_password: '',
      inbound_ids: ['inb_a'],
    });
    const cache = new MemberCache<ModelSubscription>({ maxRows: 1000, minGroupRows: 1 });
    // sub_a expires first, sub_b next; 30 more without an expiry (enough that one going is a change, not a new order).
    const rows = [
      sub('sub_a', 10),
      sub('sub_b', 20),
      ...Array.from({ length: 30 }, (_, k) => sub(`sub_c${String(k).padStart(2, '0')}`, null)),
    ];
    const modelsOf = (chunks: ModelSubscription[][]) => groupModels(chunks, 'inb_a', (r) => r, { cache, groupId: 'g' });
    // One member a bucket (as in a big group, where a bucket is 1/256 of it); a kept bucket is the same array.
    const chunks = rows.map((r) => [r]);
    const bucketsOf = (kept: ModelSubscription[][]) => new Map(kept.map((rows, k) => [k, { count: 0, sum: '0', rows }]));
    cache.keep('g', 's', bucketsOf(chunks));
    const first = modelsOf(chunks);
    expect(servingMembersOf(first, new Date(T0)).untilMs).toBe(T0 + 10_000);
    // sub_a goes (its bucket read again without it): what is kept is brought up to date, its expiry with it.
    const without = rows.slice(1);
    cache.keep('g', 's', bucketsOf(chunks.slice(1)));
    const second = modelsOf(chunks.slice(1));
    const after = servingMembersOf(second, new Date(T0 + 1000));
    expect(after.untilMs).toBe(T0 + 20_000);
    expect(after.serving.map((m) => m.sub.id)).toEqual(without.map((r) => r.id));
    // Brought up to date, not derived again: the entries of those that stayed are the ones made before.
    expect(after.serving[0]).toBe(servingMembersOf(first, new Date(T0)).serving[1]);
    // Past sub_b's expiry it is derived again: sub_b no longer serves.
    expect(servingMembersOf(second, new Date(T0 + 20_000)).serving.map((m) => m.sub.id)).toEqual(rows.slice(2).map((r) => r.id));
  });
});
