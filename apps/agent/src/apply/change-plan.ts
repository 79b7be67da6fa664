import { createHash } from 'node:crypto';
import { InboundUser, NodeConfig } from '@svc/proto';

/**
 * What it takes to go from the running configuration to the next one. When nothing but the users
 * of existing inbounds changed, the change goes through the engine's HandlerService and nobody
 * else's connection drops; anything else (an inbound, outbound, rule or certificate changed)
 * needs the new configuration loaded, i.e. a restart. Each inbound's users are hashed, so an
 * inbound whose users are the same is not touched, and a reconnect that changes nothing restarts
 * nothing.
 */
export interface InboundUserChange {
  tag: string;
  /** Emails whose users leave the inbound (including users whose credentials change). */
  remove: string[];
  /** Users that join the inbound (including the new credentials of changed users). */
  add: InboundUser[];
}

export type ChangePlan = { kind: 'same' } | { kind: 'users'; changes: InboundUserChange[] } | { kind: 'restart'; reason: string };

/*
 * The running configuration is compared with every snapshot that follows it: what is derived
 * from it (its skeleton, each user's key, each inbound's hash) is kept with the objects
 * themselves, so it is computed once, when the configuration arrives, not on every apply.
 */
const skeletons = new WeakMap<NodeConfig, Buffer>();
const userKeys = new WeakMap<InboundUser, string>();
const hashes = new WeakMap<InboundUser[], string>();

/** The configuration with every inbound's users left out: what a hot change cannot alter. */
function skeleton(config: NodeConfig): Buffer {
  let bytes = skeletons.get(config);
  if (!bytes) {
    const xray = config.xray;
    bytes = Buffer.from(
      NodeConfig.encode({
        ...config,
        xray: xray ? { ...xray, inbounds: xray.inbounds.map((i) => ({ ...i, users: [] })) } : undefined,
      }).finish(),
    );
    skeletons.set(config, bytes);
  }
  return bytes;
}

/** A user's identity for comparison: its encoded message (email and account). */
function userKey(u: InboundUser): string {
  let key = userKeys.get(u);
  if (key === undefined) {
    key = Buffer.from(InboundUser.encode(u).finish()).toString('base64');
    userKeys.set(u, key);
  }
  return key;
}

/** Hash of an inbound's users (order-independent): equal hashes, nothing to do. */
export function usersHash(users: InboundUser[]): string {
  let hash = hashes.get(users);
  if (hash === undefined) {
    const h = createHash('sha256');
    for (const k of users.map(userKey).sort()) h.update(k).update('\n');
    hash = h.digest('hex');
    hashes.set(users, hash);
  }
  return hash;
}

export function planChange(running: NodeConfig, next: NodeConfig): ChangePlan {
  if (!Buffer.from(skeleton(running)).equals(Buffer.from(skeleton(next))))
    return { kind: 'restart', reason: 'inbounds, outbounds, routing or certificates changed' };
  const before = new Map((running.xray?.inbounds ?? []).map((i) => [i.tag, i.users]));
  const changes: InboundUserChange[] = [];
  for (const inbound of next.xray?.inbounds ?? []) {
    const old = before.get(inbound.tag) ?? [];
    if (usersHash(old) === usersHash(inbound.users)) continue;
    const oldByEmail = new Map(old.map((u) => [u.email, userKey(u)]));
    const newByEmail = new Map(inbound.users.map((u) => [u.email, userKey(u)]));
    if (oldByEmail.size !== old.length || newByEmail.size !== inbound.users.length)
      return { kind: 'restart', reason: `inbound ${inbound.tag} has two users with one email` };
    const remove: string[] = [];
    for (const [email, key] of oldByEmail) if (newByEmail.get(email) !== key) remove.push(email);
    const add = inbound.users.filter((u) => oldByEmail.get(u.email) !== newByEmail.get(u.email));
    if (add.some((u) => u.email === '') || remove.includes(''))
      return { kind: 'restart', reason: `inbound ${inbound.tag} has a user without email` };
    changes.push({ tag: inbound.tag, remove, add });
  }
  return changes.length === 0 ? { kind: 'same' } : { kind: 'users', changes };
}
