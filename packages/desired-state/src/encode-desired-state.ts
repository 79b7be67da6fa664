import { encodeFlat, FlatWriter, InboundUser, type RepeatedInsertion, ServerMessage, spliceRepeated, UserLimits } from '@svc/proto';
import { type CompiledParts, sliceOf, userLimitOf, userOf } from './compile.ts';
import type { ModelInbound, ModelSlice, ModelSubscription, NodeModel } from './model.ts';

/** A node with this many inbound users or more is encoded here (encodeDesiredState), not handed on as objects. */
export const ENCODE_FROM_USERS = 10_000;

/**
 * Field numbers on the way to the members in a ServerMessage (the wire contract fixes them,
 * spec 9.3; encode-desired-state.test.ts checks the bytes against the generated encoder's).
 */
const FIELD = {
  serverMessageDesiredState: 1,
  desiredStateConfig: 2,
  nodeConfigXray: 1,
  xrayInbounds: 1,
  inboundUsers: 7,
  nodeConfigUserLimits: 11,
} as const;
const LEN = 2;

/**
 * The ServerMessage carrying a node's DesiredState, encoded from its compiled parts: the same
 * bytes as encoding { desiredState: { revision, config: compileNodeConfig(m) } } with the
 * generated encoders over a FlatWriter, made with less work when the members were encoded
 * before (issue 37.2).
 *
 * The config without its members (a few objects) goes through the generated encoders. The
 * members, ~300,000 entries on a 100,000-user node, are encoded in runs: a run ends at a member
 * whose id hashes to a boundary (one in RUN_SPAN on average), so where a run ends depends on
 * its own members only. A run is kept (RunCache) with the members it was made of, each by the
 * row its model was made from (ModelSubscription.source: the member cache hands the same row
 * object while a member's row is unchanged, to every node it serves) or by the model, so a run
 * whose members are the same as before (and, for user limits, the same slices) is the same
 * bytes and is copied as it is: from one push of a node to the next, and between nodes whose
 * inbounds make user entries alike (userSpace). A one-user change encodes one run of each list again
 * (~256 members) instead of every member. The entries are spliced into the config's encoding
 * (@svc/proto spliceRepeated: the length prefixes on the way written anew).
 */
export function encodeDesiredState(m: NodeModel, parts: CompiledParts, runs: RunCache = DEFAULT_RUNS): Uint8Array {
  const skeleton = encodeFlat(ServerMessage, { desiredState: { revision: BigInt(m.revision), config: parts.config } });
  const config: Array<readonly [number, number]> = [
    [FIELD.serverMessageDesiredState, 0],
    [FIELD.desiredStateConfig, 0],
  ];
  const insertions: RepeatedInsertion[] = [];
  const writer = new FlatWriter(64 * 1024);
  for (const { at, inbound, members } of parts.users) {
    if (members.length === 0) continue;
    const tag = ((FIELD.inboundUsers << 3) | LEN) >>> 0;
    const chunks = inRuns(runs, userSpace(inbound), members, subOfServing, undefined, (from, to) => {
      for (let k = from; k < to; k++) {
        const { email, sub } = members[k] as (typeof members)[number];
        InboundUser.encode(userOf(inbound, email, sub), writer.uint32(tag).fork()).join();
      }
      return writer.finish();
    });
    insertions.push({ path: [...config, [FIELD.nodeConfigXray, 0], [FIELD.xrayInbounds, at]], field: FIELD.inboundUsers, chunks });
  }
  const { limited } = parts;
  if (limited.length) {
    const tag = ((FIELD.nodeConfigUserLimits << 3) | LEN) >>> 0;
    const slices = { map: m.slices, of: (sub: ModelSubscription) => sliceOf(sub, m.slices) };
    const chunks = inRuns(runs, `limits ${m.node_id}`, limited, itself, slices, (from, to) => {
      for (let k = from; k < to; k++) {
        const sub = limited[k] as ModelSubscription;
        UserLimits.encode(userLimitOf(sub, slices.of(sub)), writer.uint32(tag).fork()).join();
      }
      return writer.finish();
    });
    insertions.push({ path: config, field: FIELD.nodeConfigUserLimits, chunks });
  }
  return spliceRepeated(skeleton, insertions);
}

/** What an inbound's user entry is made of besides the member: runs are shared by inbounds alike in it. */
const userSpace = (i: ModelInbound) =>
  `users ${i.protocol} ${i.vless_flow ?? ''} ${i.shadowsocks_method ?? ''} ${i.shadowsocks_server_key ?? ''}`;

/** Members per run, on average (a power of two). */
export const RUN_SPAN = 256;

/** Whether a run ends at this member: FNV-1a of its id, one in RUN_SPAN. */
function endsRun(id: string): boolean {
  let h = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 0x01000193);
  return ((h >>> 0) & (RUN_SPAN - 1)) === 0;
}

/** What a run keeps a member by: the row its model was made from when there is one (ModelSubscription.source), else the model. */
const identityOf = (sub: ModelSubscription): object => sub.source ?? sub;

interface Run {
  /** Each member's identity (identityOf). */
  members: readonly object[];
  /** User limits only: the node's slices the run was made with, and each member's slice in them. */
  slices?: { map: NodeModel['slices']; each: ReadonlyArray<ModelSlice | undefined> };
  bytes: Uint8Array;
}

/** A node's slices (a model's map is never changed once made: read-slices.ts makes a new one), and a member's slice in them. */
interface Slices {
  map: NodeModel['slices'];
  of: (sub: ModelSubscription) => ModelSlice | undefined;
}

const sameSlice = (a: ModelSlice | undefined, b: ModelSlice | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.slice_id === b.slice_id && a.slice_bytes === b.slice_bytes);

const subOfServing = (s: CompiledParts['serving'][number]) => s.sub;
const itself = (s: ModelSubscription) => s;

/** The encoded entries of `members` (in order; each its subscription by `subOf`), kept runs copied, the others encoded by `encode(from, to)`. */
function inRuns<T>(
  runs: RunCache,
  space: string,
  members: readonly T[],
  subOf: (member: T) => ModelSubscription,
  slices: Slices | undefined,
  encode: (from: number, to: number) => Uint8Array,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  let k = 0;
  while (k < members.length) {
    const first = identityOf(subOf(members[k] as T));
    const run = runs.get(space, first);
    if (run && fits(run, members, subOf, slices, k)) {
      runs.stats.kept++;
      out.push(run.bytes);
      k += run.members.length;
      continue;
    }
    let end = k;
    while (end < members.length && !endsRun(subOf(members[end++] as T).id));
    const bytes = encode(k, end);
    runs.stats.made++;
    const made = members.slice(k, end).map(subOf);
    runs.set(space, first, {
      members: made.map(identityOf),
      ...(slices ? { slices: { map: slices.map, each: made.map(slices.of) } } : {}),
      bytes,
    });
    out.push(bytes);
    k = end;
  }
  return out;
}

/** Whether a kept run is the entries of the members from `at` on: the same member objects, and (user limits) the same slices. */
function fits<T>(
  run: Run,
  members: readonly T[],
  subOf: (member: T) => ModelSubscription,
  slices: Slices | undefined,
  at: number,
): boolean {
  const n = run.members.length;
  if (at + n > members.length || (slices === undefined) !== (run.slices === undefined)) return false;
  for (let j = 0; j < n; j++) if (run.members[j] !== identityOf(subOf(members[at + j] as T))) return false;
  // The same slices map: the same slices (no lookup per member).
  if (!slices || !run.slices || run.slices.map === slices.map) return true;
  for (let j = 0; j < n; j++) if (!sameSlice(run.slices.each[j], slices.of(subOf(members[at + j] as T)))) return false;
  return true;
}

/**
 * Runs kept in two generations under a byte bound: new runs go into the current one, a run
 * found in the previous one is moved over, and when the current one holds half the bound it
 * becomes the previous one (the one before it dropped). What the last encodes of the busiest
 * nodes used stays; the rest goes within two turns.
 */
export class RunCache {
  private current = new Map<string, Map<object, Run>>();
  private previous = new Map<string, Map<object, Run>>();
  private currentBytes = 0;
  /** Runs copied as kept / encoded, since start. */
  readonly stats = { kept: 0, made: 0 };

  constructor(readonly maxBytes: number) {}

  get(space: string, first: object): Run | undefined {
    const run = this.current.get(space)?.get(first);
    if (run) return run;
    const old = this.previous.get(space)?.get(first);
    if (old) {
      this.previous.get(space)?.delete(first);
      this.set(space, first, old);
    }
    return old;
  }

  set(space: string, first: object, run: Run): void {
    let runs = this.current.get(space);
    if (!runs) {
      runs = new Map();
      this.current.set(space, runs);
    }
    runs.set(first, run);
    this.currentBytes += run.bytes.length + 8 * run.members.length;
    if (this.currentBytes > this.maxBytes / 2) {
      this.previous = this.current;
      this.current = new Map();
      this.currentBytes = 0;
    }
  }
}

/** Room for the runs of a few 100,000-user nodes (~25 MiB each: users of two inbounds, user limits). */
const DEFAULT_RUNS = new RunCache(128 * 2 ** 20);
