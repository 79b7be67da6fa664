// The entitlement rule of the agent (issue 36.3), on real files in a temporary directory and
// clocks the test moves: when a user is cut for time or for its traffic slice, that a jump of
// the node's wall clock cuts no one early, that a new slice or a later not-after entitles a cut
// user again, that counts, the clock offset, cuts and unacknowledged reports survive a restart
// of the agent (and the offset not a reboot), and that a cut is on disk before it is reported.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentMessage, CutoffReason, InboundUser, NodeConfig, Protocol, UserLimits } from '@svc/proto';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planChange } from '../../src/apply/change-plan.ts';
import { engineView } from '../../src/entitlements/engine-view.ts';
import { EntitlementEnforcer } from '../../src/entitlements/entitlement-enforcer.ts';
import { cutReason, staysCut } from '../../src/entitlements/entitlement-rule.ts';
import { monotonicMs, ServerClockEstimate } from '../../src/entitlements/server-clock.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-entitlements-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = 1_800_000_000_000;
const GB = 1_000_000_000n;

/** A node's clocks: monotonic since boot and wall, moved by the test; a boot id. */
function clocks(boot = 'boot-1') {
  const c = { mono: 5_000, wall: T0 + 3_600_000, boot };
  return {
    c,
    sources: { monotonic: () => c.mono, wall: () => c.wall, bootId: async () => c.boot },
    advance(ms: number) {
      c.mono += ms;
      c.wall += ms;
    },
  };
}

const user = (sub: string) => InboundUser.fromPartial({ email: `${sub}@svc`, vmess: { id: '11111111-1111-4111-8111-111111111111' } });
const limits = (sub: string, l: Partial<UserLimits>) => UserLimits.fromPartial({ subscriptionId: sub, ...l });
const config = (subs: string[], userLimits: UserLimits[]): NodeConfig =>
  NodeConfig.fromPartial({
    xray: {
      inbounds: [{ tag: 'in-1', protocol: Protocol.VMESS, port: 443, users: subs.map(user) }],
      outbounds: [{ tag: 'direct', protocol: Protocol.FREEDOM }],
    },
    userLimits,
  });
const record = (reportId: bigint, sub: string, bytes: bigint) => ({
  reportId,
  entries: [{ subscriptionId: sub, uplink: bytes / 2n, downlink: bytes - bytes / 2n }],
});

interface Harness {
  enforcer: EntitlementEnforcer;
  sent: AgentMessage[];
  /** The book's text when each report was sent. */
  bookAtSend: string[];
  reapplied: number;
  collected: number;
  unjournaled: Map<string, bigint>;
  connected: boolean;
}

async function harness(sources: ReturnType<typeof clocks>['sources'], wall = () => T0): Promise<Harness> {
  const h = { sent: [], bookAtSend: [], reapplied: 0, collected: 0, unjournaled: new Map(), connected: true } as unknown as Harness;
  h.enforcer = await EntitlementEnforcer.open({
    stateDir: dir,
    clock: sources,
    peek: async () => h.unjournaled,
    collect: async () => {
      h.collected++;
    },
    reapply: async () => {
      h.reapplied++;
    },
    send: (m) => {
      if (!h.connected) return false;
      h.sent.push(m);
      return true;
    },
    connected: () => h.connected,
    log: pino({ level: 'silent' }),
    resendAfterMs: 60_000,
    wall,
  });
  return h;
}

const cutoffs = (h: Harness) => h.sent.flatMap((m) => (m.cutoffs ? [m.cutoffs] : []));

describe('the entitlement rule', () => {
  it('time: cut once the control-plane time reaches not_after_ms; 0 is no end', () => {
    const l = { notAfterMs: BigInt(T0), sliceId: 0n, sliceBytes: 0n };
    expect(cutReason(l, 0n, T0 - 1)).toBeNull();
    expect(cutReason(l, 0n, T0)).toBe(CutoffReason.CUTOFF_TIME);
    expect(cutReason({ ...l, notAfterMs: 0n }, 10n * GB, T0 * 2)).toBeNull();
  });

  it('slice: cut once the bytes counted reach slice_bytes of a slice_id; slice_id 0 is unmetered; time is named first', () => {
    const l = { notAfterMs: 0n, sliceId: 7n, sliceBytes: GB };
    expect(cutReason(l, GB - 1n, T0)).toBeNull();
    expect(cutReason(l, GB, T0)).toBe(CutoffReason.CUTOFF_SLICE);
    expect(cutReason({ ...l, sliceId: 0n }, 100n * GB, T0)).toBeNull();
    expect(cutReason({ ...l, notAfterMs: BigInt(T0) }, GB, T0)).toBe(CutoffReason.CUTOFF_TIME);
  });

  it('a cut user stays cut under the same limits (even if the clock went back) and is entitled again by a new slice, a later not-after or no limits', () => {
    const under = { notAfterMs: BigInt(T0), sliceId: 7n, sliceBytes: GB };
    expect(staysCut(under, under, 0n, T0 - 60_000)).toBe(true);
    expect(staysCut(under, { ...under, sliceId: 8n, notAfterMs: BigInt(T0 + 86_400_000) }, 0n, T0)).toBe(false);
    expect(staysCut(under, { ...under, sliceId: 8n }, 0n, T0)).toBe(true); // the time is still past
    expect(staysCut({ ...under, notAfterMs: 0n }, { ...under, notAfterMs: 0n, sliceBytes: 2n * GB }, GB, T0)).toBe(false);
    expect(staysCut(under, undefined, GB, T0)).toBe(false);
    expect(staysCut(under, { notAfterMs: 0n, sliceId: 0n, sliceBytes: 0n }, GB, T0)).toBe(false);
  });
});

describe('the control plane’s clock on the node', () => {
  it('process.hrtime is the system’s monotonic clock: another process (a restarted agent) reads it on from where this one is', () => {
    const mine = monotonicMs();
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.hrtime.bigint() / 1000000n))'], {
      encoding: 'utf8',
    });
    const theirs = Number(child.stdout);
    expect(theirs).toBeGreaterThanOrEqual(mine);
    expect(theirs - mine).toBeLessThan(10_000);
  });

  it('ServerClock sets the estimate; a jump of the wall clock moves nothing, before a ServerClock (wall read once) and after', async () => {
    const k = clocks();
    const clock = await ServerClockEstimate.open(dir, k.sources);
    expect(clock.source).toBe('wall');
    expect(clock.now()).toBe(k.c.wall);
    k.c.wall += 86_400_000; // the node's clock jumps a day ahead
    expect(clock.now()).toBe(k.c.wall - 86_400_000);
    await clock.heard(T0);
    expect(clock.source).toBe('server');
    k.advance(1_000);
    k.c.wall -= 7 * 86_400_000;
    expect(clock.now()).toBe(T0 + 1_000);
  });

  it('an agent restarted on the same boot keeps the offset; after a reboot it falls back to the wall clock', async () => {
    const k = clocks();
    await (await ServerClockEstimate.open(dir, k.sources)).heard(T0);
    k.advance(30_000);
    const again = await ServerClockEstimate.open(dir, k.sources);
    expect(again.source).toBe('server');
    expect(again.now()).toBe(T0 + 30_000);
    k.c.boot = 'boot-2';
    k.c.mono = 1_000;
    const rebooted = await ServerClockEstimate.open(dir, k.sources);
    expect(rebooted.source).toBe('wall');
    expect(rebooted.now()).toBe(k.c.wall);
  });
});

describe('the enforcer: cuts, reports, re-entitlement, restarts', () => {
  it('time: a user whose not-after passes is cut within one pass; a wall-clock jump of a day ahead cuts no one early', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.heard(BigInt(T0));
    const withheld = await h.enforcer.withhold(config(['a', 'b'], [limits('a', { notAfterMs: BigInt(T0 + 60_000) })]));
    expect(withheld.size).toBe(0);
    k.c.wall += 86_400_000;
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(0);
    k.advance(59_999);
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(0);
    k.advance(1);
    await h.enforcer.pass();
    const [report] = cutoffs(h);
    expect(report?.entries).toEqual([
      { subscriptionId: 'a', reason: CutoffReason.CUTOFF_TIME, atMs: BigInt(T0 + 60_000), sliceId: 0n, sliceUsedBytes: 0n },
    ]);
    expect(h.reapplied).toBe(1);
    expect([...h.enforcer.withheld()]).toEqual(['a@svc']);
    // Cut once: later passes report nothing new.
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(1);
  });

  it('slice: journaled bytes plus what the engine counted since are held against the slice; the cut names the slice and its count', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.withhold(
      config(['a', 'b'], [limits('a', { sliceId: 3n, sliceBytes: 1_000_000n }), limits('b', { sliceId: 4n, sliceBytes: 1_000_000n })]),
    );
    await h.enforcer.folded([record(10n, 'a', 600_000n), record(11n, 'b', 100_000n)]);
    expect(h.enforcer.sliceUsed('a')).toBe(600_000n);
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(0);
    h.unjournaled.set('a', 400_000n);
    await h.enforcer.pass();
    expect(cutoffs(h)[0]?.entries).toEqual([
      { subscriptionId: 'a', reason: CutoffReason.CUTOFF_SLICE, atMs: expect.any(BigInt), sliceId: 3n, sliceUsedBytes: 1_000_000n },
    ]);
    expect([...h.enforcer.withheld()]).toEqual(['a@svc']);
  });

  it('a new slice_id starts from 0 and entitles a cut user again; the same slice again keeps it cut; a record is counted once', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    const users = ['a'];
    await h.enforcer.withhold(config(users, [limits('a', { sliceId: 1n, sliceBytes: 1000n })]));
    await h.enforcer.folded([record(5n, 'a', 1000n)]);
    await h.enforcer.folded([record(5n, 'a', 1000n)]);
    expect(h.enforcer.sliceUsed('a')).toBe(1000n);
    await h.enforcer.pass();
    expect([...h.enforcer.withheld()]).toEqual(['a@svc']);
    expect((await h.enforcer.withhold(config(users, [limits('a', { sliceId: 1n, sliceBytes: 1000n })]))).size).toBe(1);
    expect((await h.enforcer.withhold(config(users, [limits('a', { sliceId: 2n, sliceBytes: 1000n })]))).size).toBe(0);
    expect(h.enforcer.sliceUsed('a')).toBe(0n);
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(1);
  });

  it('a new slice starts from what the engine has counted by then: bytes carried before it arrived, not yet journaled, do not count against it', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.withhold(config(['a'], [limits('a', { sliceId: 1n, sliceBytes: 1000n })]));
    h.unjournaled.set('a', 700n);
    await h.enforcer.withhold(config(['a'], [limits('a', { sliceId: 2n, sliceBytes: 1000n })]));
    expect(h.enforcer.sliceUsed('a')).toBe(-700n);
    // The next collection journals those 700 bytes and 200 more: 200 count against slice 2.
    await h.enforcer.folded([record(30n, 'a', 900n)]);
    h.unjournaled.clear();
    expect(h.enforcer.sliceUsed('a')).toBe(200n);
    await h.enforcer.pass();
    expect(cutoffs(h)).toHaveLength(0);
  });

  it('a slice past its half with new bytes has the usage collected at once while the stream is up (the control plane grants the next slice at half used)', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.withhold(config(['a'], [limits('a', { sliceId: 1n, sliceBytes: 1000n })]));
    await h.enforcer.folded([record(40n, 'a', 400n)]);
    h.unjournaled.set('a', 50n);
    await h.enforcer.pass();
    expect(h.collected).toBe(0);
    h.unjournaled.set('a', 100n);
    await h.enforcer.pass();
    expect(h.collected).toBe(1);
    h.connected = false;
    await h.enforcer.pass();
    expect(h.collected).toBe(1);
    expect(cutoffs(h)).toHaveLength(0);
  });

  it('a pass looks at who moved: times come in order after a cut, a slice used up by journaled bytes alone is cut, new limits are looked at whole', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.heard(BigInt(T0));
    const cfg = config(
      ['a', 'b', 'c'],
      [
        limits('a', { notAfterMs: BigInt(T0 + 10_000) }),
        limits('b', { notAfterMs: BigInt(T0 + 20_000) }),
        limits('c', { sliceId: 1n, sliceBytes: 1000n }),
      ],
    );
    await h.enforcer.withhold(cfg);
    await h.enforcer.pass();
    k.advance(10_000);
    await h.enforcer.pass();
    k.advance(10_000);
    await h.enforcer.pass();
    expect(cutoffs(h).flatMap((r) => r.entries.map((e) => e.subscriptionId))).toEqual(['a']);
    h.enforcer.acknowledged(cutoffs(h)[0]?.reportId ?? 0n);
    expect(
      cutoffs(h)
        .at(-1)
        ?.entries.map((e) => e.subscriptionId),
    ).toEqual(['b']);
    await h.enforcer.folded([record(50n, 'c', 1000n)]);
    await h.enforcer.pass();
    expect([...h.enforcer.withheld()].sort()).toEqual(['a@svc', 'b@svc', 'c@svc']);
    // A slice made smaller under the same id: looked at when the limits arrive.
    const d = await harness(clocks('boot-9').sources);
    await d.enforcer.withhold(config(['d'], [limits('d', { sliceId: 1n, sliceBytes: 10_000n })]));
    await d.enforcer.folded([record(10n ** 17n, 'd', 600n)]);
    await d.enforcer.pass();
    await d.enforcer.withhold(config(['d'], [limits('d', { sliceId: 1n, sliceBytes: 500n })]));
    await d.enforcer.pass();
    expect(d.enforcer.withheld().has('d@svc')).toBe(true);
  });

  it('a later not-after entitles a user cut for time again; a user that leaves the desired state leaves the cut set', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    await h.enforcer.heard(BigInt(T0));
    await h.enforcer.withhold(config(['a', 'b'], [limits('a', { notAfterMs: BigInt(T0) }), limits('b', { notAfterMs: BigInt(T0) })]));
    await h.enforcer.pass();
    expect([...h.enforcer.withheld()].sort()).toEqual(['a@svc', 'b@svc']);
    const next = await h.enforcer.withhold(config(['a'], [limits('a', { notAfterMs: BigInt(T0 + 86_400_000) })]));
    expect(next.size).toBe(0);
  });

  it('a restart of the agent keeps slice counts, cuts, the clock offset and unacknowledged reports; report ids keep rising; reports go one at a time in id order; an ack is forgotten for good', async () => {
    const k = clocks();
    const first = await harness(k.sources);
    await first.enforcer.heard(BigInt(T0));
    const cfg = config(
      ['a', 'b', 'c'],
      [
        limits('a', { sliceId: 1n, sliceBytes: 1000n }),
        limits('b', { sliceId: 2n, sliceBytes: 5000n }),
        limits('c', { notAfterMs: BigInt(T0 + 10_000) }),
      ],
    );
    await first.enforcer.withhold(cfg);
    await first.enforcer.folded([record(20n, 'a', 1200n), record(21n, 'b', 3000n)]);
    await first.enforcer.pass();
    const r1 = cutoffs(first)[0];
    expect(r1?.entries.map((e) => e.subscriptionId)).toEqual(['a']);

    k.advance(5_000);
    const second = await harness(k.sources);
    expect(second.enforcer.clock.source).toBe('server');
    await second.enforcer.withhold(cfg);
    expect(second.enforcer.sliceUsed('b')).toBe(3000n);
    // Records already folded are not counted again; a newer one is.
    await second.enforcer.folded([record(21n, 'b', 3000n), record(22n, 'b', 1000n)]);
    expect(second.enforcer.sliceUsed('b')).toBe(4000n);
    expect([...second.enforcer.withheld()]).toEqual(['a@svc']);
    second.enforcer.opened();
    expect(cutoffs(second).map((r) => r.reportId)).toEqual([r1?.reportId]);
    k.advance(5_000);
    await second.enforcer.pass();
    // One report at a time, in id order: the new one waits for the ack of the older.
    expect(cutoffs(second)).toHaveLength(1);
    second.enforcer.acknowledged(r1?.reportId ?? 0n);
    const r2 = cutoffs(second)[1];
    expect(r2?.entries.map((e) => [e.subscriptionId, e.reason])).toEqual([['c', CutoffReason.CUTOFF_TIME]]);
    expect(r2?.reportId).toBeGreaterThan(r1?.reportId ?? 0n);
    await second.enforcer.withhold(cfg); // queued behind the ack's write

    const third = await harness(k.sources);
    third.enforcer.opened();
    expect(cutoffs(third).map((r) => r.reportId)).toEqual([r2?.reportId]);
  });

  it('a cut is on disk before it is reported; while no stream is open the report waits, then goes on the next stream and on resend until acknowledged', async () => {
    const k = clocks();
    const h = await harness(k.sources);
    h.connected = false;
    await h.enforcer.heard(BigInt(T0));
    await h.enforcer.withhold(config(['a'], [limits('a', { notAfterMs: BigInt(T0) })]));
    await h.enforcer.pass();
    expect(h.sent).toHaveLength(0);
    const book = JSON.parse(await readFile(join(dir, 'entitlements', 'book.json'), 'utf8'));
    expect(Object.keys(book.cut)).toEqual(['a']);
    expect(book.reports).toHaveLength(1);
    h.connected = true;
    h.enforcer.opened();
    h.enforcer.opened();
    expect(cutoffs(h)).toHaveLength(2);
    expect(cutoffs(h)[0]?.reportId).toBe(BigInt(book.reports[0].id));
    h.enforcer.acknowledged(BigInt(book.reports[0].id));
    h.enforcer.opened();
    h.enforcer.resendStale();
    expect(cutoffs(h)).toHaveLength(2);
  });
});

describe('what the engine is given', () => {
  it('the desired configuration less the withheld users and less UserLimits: a change of limits alone changes nothing in the engine', () => {
    const a = config(['a', 'b'], [limits('a', { sliceId: 1n, sliceBytes: 10n })]);
    const b = config(['a', 'b'], [limits('a', { sliceId: 2n, sliceBytes: 10n })]);
    expect(planChange(engineView(a, new Set()), engineView(b, new Set()))).toEqual({ kind: 'same' });
    const cut = planChange(engineView(a, new Set()), engineView(b, new Set(['a@svc'])));
    expect(cut).toEqual({ kind: 'users', changes: [{ tag: 'in-1', remove: ['a@svc'], add: [] }] });
    const back = planChange(engineView(a, new Set(['a@svc'])), engineView(b, new Set()));
    expect(back.kind === 'users' && back.changes[0]?.add.map((u) => u.email)).toEqual(['a@svc']);
  });
});
