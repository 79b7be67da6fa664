import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENCODE_FROM_USERS } from '@svc/desired-state';
import { ControlPlaneWireDefinition, NodeConfig, ServerMessage } from '@svc/proto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Snapshot } from './desired-state-source.ts';
import { fileSeal } from './file-seal.ts';
import { KEEP_FROM_BYTES, keptSource } from './kept-source.ts';
import { createLastPushStore } from './last-push-store.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const NOW = Date.parse('2026-12-01T12:00:00Z');

/** A node config of `users` users with long names (past KEEP_FROM_BYTES from ENCODE_FROM_USERS on). */
const configOf = (users: number, tag = 'in') =>
  NodeConfig.fromPartial({
    xray: { inbounds: [{ tag, port: 443, users: Array.from({ length: users }, (_, i) => ({ email: `${'u'.repeat(100)}-${i}@svc` })) }] },
  });

/**
 * The kept source over a store in a fresh directory and a compiler stand-in that counts its
 * calls; like the gateway's (compiledSource), it hands a node of ENCODE_FROM_USERS users or more
 * on encoded, a smaller one as its config.
 */
function setUp(opts: { users: number; desired: number; untilMs?: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kept-source-'));
  dirs.push(dir);
  const state = { desired: opts.desired, compiles: 0, outcomes: [] as string[] };
  const store = createLastPushStore({ dir, maxBytes: 1 << 30, seal: fileSeal(randomBytes(32)), warn: () => {} });
  const config = configOf(opts.users);
  const source = keptSource(
    async () => {
      state.compiles++;
      const untilMs = opts.untilMs ?? Number.POSITIVE_INFINITY;
      if (opts.users < ENCODE_FROM_USERS) return { revision: state.desired, config, untilMs };
      const bytes = ControlPlaneWireDefinition.sync.responseSerialize({ desiredState: { revision: BigInt(state.desired), config } });
      return { revision: state.desired, untilMs, encoded: { bytes } };
    },
    store,
    {
      nowMs: () => NOW,
      desiredRevision: async () => state.desired,
      counted: (o) => state.outcomes.push(o),
    },
  );
  return { source, store, state, config };
}
const decoded = (s: Snapshot | null) => ServerMessage.decode(s?.encoded?.bytes as Uint8Array).desiredState;

describe('keptSource: a big node’s first push from the message kept for its revision', () => {
  it('a compiled big node is sent encoded once and kept; asked for that revision again, the kept bytes are sent and nothing is compiled', async () => {
    const { source, store, state, config } = setUp({ users: ENCODE_FROM_USERS, desired: 5 });
    const first = await source('nod_a', 5);
    expect(first?.encoded?.bytes.length).toBeGreaterThanOrEqual(KEEP_FROM_BYTES);
    expect(decoded(first)?.revision).toBe(5n);
    expect(NodeConfig.encode(decoded(first)?.config as NodeConfig).finish()).toEqual(NodeConfig.encode(config).finish());
    // The send gzip'd it: kept with it.
    const gzipped = Buffer.from('the gzip the send made');
    first?.encoded?.compressed?.(1, gzipped);
    await store.flush();
    const again = await source('nod_a', 5);
    expect(again?.encoded?.gzip).toEqual({ level: 1, bytes: gzipped });
    expect(Buffer.from(again?.encoded?.bytes as Uint8Array).equals(Buffer.from(first?.encoded?.bytes as Uint8Array))).toBe(true);
    expect(state.compiles).toBe(1);
    expect(state.outcomes).toEqual(['compiled', 'kept']);
  });

  it('compiled when the revision asked is no longer the node’s desired one (a change committed since it was read)', async () => {
    const { source, store, state } = setUp({ users: ENCODE_FROM_USERS, desired: 5 });
    await source('nod_a', 5);
    await store.flush();
    state.desired = 6;
    expect(decoded(await source('nod_a', 5))?.revision).toBe(6n);
    expect(state.compiles).toBe(2);
  });

  it('compiled when no revision is asked (a reconcile that named none)', async () => {
    const { source, store, state } = setUp({ users: ENCODE_FROM_USERS, desired: 5 });
    await source('nod_a', 5);
    await store.flush();
    await source('nod_a');
    expect(state.compiles).toBe(2);
  });

  it('compiled when the kept content stopped holding (untilMs passed)', async () => {
    const { source, store, state } = setUp({ users: ENCODE_FROM_USERS, desired: 5, untilMs: NOW });
    await source('nod_a', 5);
    await store.flush();
    await source('nod_a', 5);
    expect(state.compiles).toBe(2);
  });

  it('a node handed on as compiled objects (below ENCODE_FROM_USERS) goes on as it is, nothing kept', async () => {
    const { source, store, state } = setUp({ users: ENCODE_FROM_USERS - 1, desired: 5 });
    const s = await source('nod_a', 5);
    expect(s?.config).toBeDefined();
    expect(s?.encoded).toBeUndefined();
    await store.flush();
    expect(store.stats().written).toBe(0);
    await source('nod_a', 5);
    expect(state.compiles).toBe(2);
    expect(state.outcomes).toEqual([]);
  });
});
