import { describe, expect, it } from 'vitest';
import { DeviceTracker } from '../../src/devices/device-tracker.ts';

/** The device-limit rule on one node, on a hand-moved clock: grace, order, denials, phones moving. */
const S = 1000;
/** Live devices per user, each active now, or `name@t` active at t (ms). */
let clock = 0;
const live = (entries: Record<string, string[]>) =>
  new Map(
    Object.entries(entries).map(([id, names]) => [
      id,
      new Map(
        names.map((n) => {
          const at = n.indexOf('@');
          return at < 0 ? ([n, clock] as const) : ([n.slice(0, at), Number(n.slice(at + 1))] as const);
        }),
      ),
    ]),
  );
const pass = (t: DeviceTracker, entries: Record<string, string[]>, now: number) => {
  clock = now;
  return t.pass(live(entries), now);
};
const refusedOf = (t: DeviceTracker, now: number, entries: Record<string, string[]>, id = 'sub1') => [
  ...(pass(t, entries, now).refused.get(id) ?? []),
];

describe('device limit on one node', () => {
  it('the first N devices by first sight are kept; an extra one is tolerated for the grace, then refused', () => {
    const t = new DeviceTracker({ graceMs: 20 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 2 }]);
    expect(refusedOf(t, 0, { sub1: ['10.0.0.1'] })).toEqual([]);
    expect(refusedOf(t, 1 * S, { sub1: ['10.0.0.1', '10.0.0.2'] })).toEqual([]);
    expect(refusedOf(t, 2 * S, { sub1: ['10.0.0.3', '10.0.0.1', '10.0.0.2'] })).toEqual([]);
    const mid = pass(t, { sub1: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] }, 21 * S);
    expect(mid.inGrace).toBe(1);
    // In its grace the third is not reported (the control plane's count would deny it at once).
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['10.0.0.1', '10.0.0.2'] }]);
    expect(refusedOf(t, 22 * S, { sub1: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] })).toEqual(['10.0.0.3']);
    // The kept two are reported; the refused one is not.
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['10.0.0.1', '10.0.0.2'] }]);
  });

  it('a refused device’s new connections are ended on sight while the kept ones stay; it gets the place when one leaves', () => {
    const t = new DeviceTracker({ graceMs: 20 * S, lingerMs: 5 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 2 }]);
    pass(t, { sub1: ['A', 'B', 'C'] }, 0);
    expect(refusedOf(t, 20 * S, { sub1: ['A', 'B', 'C'] })).toEqual(['C']);
    for (let s = 22; s <= 40; s += 2) {
      pass(t, { sub1: ['A', 'B'] }, s * S);
      expect(t.sighted('sub1', 'C', s * S + 1), `at ${s} s`).toBe(true);
    }
    // B goes away; once it has been gone for the linger, C's next connection is let through.
    pass(t, { sub1: ['A'] }, 42 * S);
    pass(t, { sub1: ['A'] }, 46 * S);
    expect(refusedOf(t, 48 * S, { sub1: ['A'] })).toEqual(['C']);
    expect(t.sighted('sub1', 'C', 48 * S + 1)).toBe(false);
    expect(refusedOf(t, 50 * S, { sub1: ['A', 'C'] })).toEqual([]);
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['A', 'C'] }]);
  });

  it('a phone moving from Wi-Fi to LTE is one device: the old address stops counting once its connections are gone, within the grace', () => {
    const t = new DeviceTracker({ graceMs: 20 * S, lingerMs: 5 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    for (let s = 0; s <= 10; s += 2) expect(refusedOf(t, s * S, { sub1: ['wifi'] })).toEqual([]);
    // The phone moves: new connections from LTE; the Wi-Fi ones end a few seconds later.
    expect(refusedOf(t, 12 * S, { sub1: ['wifi', 'lte'] })).toEqual([]);
    expect(refusedOf(t, 14 * S, { sub1: ['wifi', 'lte'] })).toEqual([]);
    for (let s = 16; s <= 60; s += 2) expect(refusedOf(t, s * S, { sub1: ['lte'] }), `at ${s} s`).toEqual([]);
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['lte'] }]);
  });

  it('a phone that left Wi-Fi without closing its connections: the old address falls silent and stops counting before the new one’s grace ends', () => {
    const t = new DeviceTracker({ graceMs: 20 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    for (let s = 0; s <= 10; s += 2) expect(refusedOf(t, s * S, { sub1: ['wifi'] })).toEqual([]);
    // From 10 s the Wi-Fi connections stay open on the server but nothing comes from them.
    for (let s = 12; s <= 60; s += 2) expect(refusedOf(t, s * S, { sub1: [`wifi@${10 * S}`, 'lte'] }), `at ${s} s`).toEqual([]);
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['lte'] }]);
  });

  it('an idle device whose client answers the engine’s keepalive every 15 s keeps its place', () => {
    const t = new DeviceTracker({ graceMs: 20 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    pass(t, { sub1: ['idle'] }, 0);
    let refused: string[] = [];
    for (let s = 2; s <= 90; s += 2) refused = refusedOf(t, s * S, { sub1: [`idle@${Math.floor(s / 15) * 15 * S}`, 'other'] });
    expect(refused).toEqual(['other']);
  });

  it('the grace counts from when the device became extra, not from its first sight', () => {
    const t = new DeviceTracker({ graceMs: 20 * S, lingerMs: 5 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    pass(t, { sub1: ['A', 'B'] }, 0);
    // The limit rises to 2: B is kept; back to 1 at 30 s: B's grace starts then.
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 2 }]);
    expect(refusedOf(t, 10 * S, { sub1: ['A', 'B'] })).toEqual([]);
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    expect(refusedOf(t, 30 * S, { sub1: ['A', 'B'] })).toEqual([]);
    expect(refusedOf(t, 49 * S, { sub1: ['A', 'B'] })).toEqual([]);
    expect(refusedOf(t, 50 * S, { sub1: ['A', 'B'] })).toEqual(['B']);
  });

  it('devices denied by the control plane take no place, are refused after the denial grace (a phone moving between nodes), and are let in again once the denial is lifted', () => {
    const t = new DeviceTracker({ graceMs: 20 * S, denialGraceMs: 30 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 2 }]);
    t.setDenials([{ subscriptionId: 'sub1', addresses: ['A'] }], 0);
    // In the denial's grace: not refused, still reported (else the control plane would hold it), takes no place.
    expect(refusedOf(t, 0, { sub1: ['A', 'B', 'C'] })).toEqual([]);
    expect(t.sighted('sub1', 'A', 1)).toBe(false);
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['A', 'B', 'C'] }]);
    // The same set again does not restart the grace; past it, A is refused and left out of the report.
    t.setDenials([{ subscriptionId: 'sub1', addresses: ['A'] }], 20 * S);
    expect(refusedOf(t, 30 * S, { sub1: ['A', 'B', 'C'] })).toEqual(['A']);
    expect(t.sighted('sub1', 'A', 30 * S + 1)).toBe(true);
    expect(t.report()).toEqual([{ subscriptionId: 'sub1', addresses: ['B', 'C'] }]);
    // A phone's new address denied while its old node still listed the old one: lifted within the grace, never cut.
    t.setDenials([{ subscriptionId: 'sub1', addresses: ['A', 'D'] }], 31 * S);
    expect(refusedOf(t, 40 * S, { sub1: ['B', 'C', 'D'] })).toEqual(['A']);
    t.setDenials([{ subscriptionId: 'sub1', addresses: ['A'] }], 50 * S);
    // D was never cut (A, silent since 30 s, is forgotten: nothing of it is left to end).
    expect(refusedOf(t, 70 * S, { sub1: ['B', 'C', 'D'] })).toEqual([]);
    // A user without a local limit is denied too.
    t.setDenials([{ subscriptionId: 'sub2', addresses: ['X'] }], 71 * S);
    expect(refusedOf(t, 101 * S, { sub2: ['X', 'Y'] }, 'sub2')).toEqual(['X']);
    expect(t.sighted('sub2', 'X', 102 * S)).toBe(true);
    t.setDenials([], 103 * S);
    expect(t.sighted('sub2', 'X', 103 * S)).toBe(false);
  });

  it('users are separate: the same address is another user’s kept device; users without a limit are never refused', () => {
    const t = new DeviceTracker({ graceMs: 20 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    const both = { sub1: ['A', 'NAT'], sub2: ['NAT', 'B', 'C', 'D'] };
    pass(t, both, 0);
    const v = pass(t, both, 20 * S);
    expect([...(v.refused.get('sub1') ?? [])]).toEqual(['NAT']);
    expect(v.refused.has('sub2')).toBe(false);
    expect(t.sighted('sub2', 'NAT', 21 * S)).toBe(false);
    expect(t.sighted('sub1', 'NAT', 21 * S)).toBe(true);
    expect(t.report()).toEqual([
      { subscriptionId: 'sub1', addresses: ['A'] },
      { subscriptionId: 'sub2', addresses: ['NAT', 'B', 'C', 'D'] },
    ]);
  });

  it('users and devices without live connections are forgotten (the report is the whole picture of who is connected)', () => {
    const t = new DeviceTracker({ graceMs: 20 * S, lingerMs: 5 * S, refusedMemoryMs: 60 * S });
    t.setLimits([{ subscriptionId: 'sub1', deviceLimit: 1 }]);
    pass(t, { sub1: ['A', 'B'], sub2: ['X'] }, 0);
    pass(t, { sub1: ['A', 'B'], sub2: ['X'] }, 20 * S);
    pass(t, {}, 22 * S);
    expect(t.report()).toEqual([]);
    // The refused B is remembered for refusedMemoryMs even though A left: with A gone, B's next try gets the place.
    expect(t.sighted('sub1', 'B', 30 * S)).toBe(false);
    pass(t, {}, 200 * S);
    expect(t.report()).toEqual([]);
  });
});
