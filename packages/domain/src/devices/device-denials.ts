/**
 * The fleet-wide device count (issue 36, docs/limits.md): which client addresses of one
 * subscription are refused. One rule, used by the DeviceReport ingest; the agents enforce its
 * result (ServerMessage.device_denials) on top of their own per-node count.
 */

/** How long an address stays refused after the last report that listed it: ending its connections must not let it straight back in. */
export const DENIAL_HOLD_MS = 120_000;

export interface SeenAddress {
  address: string;
  /** When any node first listed it (the earliest across nodes). */
  first_seen_at: Date;
  /** When a node last listed it (the latest across nodes). */
  seen_at: Date;
  /** When the count refused it (null: never, or allowed since). */
  denied_at: Date | null;
  /** Whether the latest report of some online node lists it (false: a refused address held after its connections ended). */
  live: boolean;
}

export interface DenialDecision {
  /** Refused addresses, each with when it was first refused. */
  denied: Array<{ address: string; denied_at: Date }>;
  /** Held rows past the hold: forgotten. */
  forget: string[];
}

/**
 * The rule, for one subscription with `limit` devices (null: no limit, nothing is refused):
 * - an address no online node lists any more is forgotten, unless it was refused within the
 *   hold (DENIAL_HOLD_MS since it was last listed): then it stays refused and takes no place;
 * - the live addresses are ranked: the ones never refused first, then by when they were first
 *   seen (the earliest first), then by the address; the first `limit` are allowed, the rest
 *   refused. So the devices that were there first keep working, a newcomer beyond the limit is
 *   refused, and a refused address stays behind every newcomer (a phone moving from Wi-Fi to
 *   LTE frees its place and takes the new one; a shared key refused does not take it).
 */
export function decideDenials(limit: number | null, seen: readonly SeenAddress[], now: Date): DenialDecision {
  const denied: DenialDecision['denied'] = [];
  const forget: string[] = [];
  const live: SeenAddress[] = [];
  for (const a of seen) {
    if (a.live) live.push(a);
    else if (limit !== null && a.denied_at !== null && now.getTime() - a.seen_at.getTime() <= DENIAL_HOLD_MS)
      denied.push({ address: a.address, denied_at: a.denied_at });
    else forget.push(a.address);
  }
  if (limit === null) return { denied: [], forget };
  live.sort(
    (x, y) =>
      Number(x.denied_at !== null) - Number(y.denied_at !== null) ||
      x.first_seen_at.getTime() - y.first_seen_at.getTime() ||
      (x.address < y.address ? -1 : x.address > y.address ? 1 : 0),
  );
  for (let i = limit; i < live.length; i++) {
    const a = live[i] as SeenAddress;
    denied.push({ address: a.address, denied_at: a.denied_at ?? now });
  }
  return { denied, forget };
}
