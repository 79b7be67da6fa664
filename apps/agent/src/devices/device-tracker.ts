import type { UserDevices } from '@svc/proto';

/**
 * The device-limit rule on one node, without I/O (device-enforcer.ts feeds it and acts on it).
 *
 * A device is a client address folded by deviceAddress (@svc/proto). Per user:
 * - devices are ranked by when they were first seen on the user's connections; the first
 *   `device_limit` present devices are kept;
 * - a device counts while its client has sent something (a new connection, data, an ACK) within
 *   `lingerMs` (default 17 s): the engine's TCP keepalive (Go's default, a probe after 15 s
 *   idle) makes a live idle client answer every ~15 s, while the connections a phone left on
 *   its old network stay open on the server but fall silent;
 * - a device beyond the limit is tolerated for `graceMs` (default 20 s) from when it became
 *   extra: a phone moving from Wi-Fi to LTE shows its new address while the old one falls
 *   silent (or its connections end); the old address then stops counting and the new one
 *   takes its place, within the grace when the move takes less than graceMs - lingerMs;
 * - after the grace the extra device is refused: the user's connections from it are ended, and
 *   every new one as soon as the access log shows it. It stays refused while it keeps trying
 *   (forgotten after `refusedMemoryMs` without a try, default 10 min) until a kept device goes
 *   away: then it takes the free place at its next connection;
 * - a device in the control plane's DeviceDenials (the fleet-wide count) takes no place and is
 *   refused once it has been denied for `denialGraceMs` (default 30 s): the fleet-wide count
 *   has no grace of its own, so a phone moving from one node to another is denied its new
 *   address while the old node still lists the old one; the old node stops listing it within
 *   lingerMs plus the report's 5 s, the count lifts the denial, and the phone never notices.
 *   A denied device is still reported while in this grace (else the control plane would hold
 *   the denial of an address no node lists).
 * Other users behind the same address are separate users: nothing here crosses users.
 */
export interface DeviceTrackerOptions {
  graceMs?: number;
  /** How long a denial of the control plane waits before it is enforced (default 30 s). */
  denialGraceMs?: number;
  lingerMs?: number;
  refusedMemoryMs?: number;
}

interface Device {
  first: number;
  /** Last time its client sent something (a live connection's last packet, a new connection). */
  last: number;
  /** Whether it had a live connection in the last pass. */
  live: boolean;
  /** Since when it is beyond the limit (null: kept). */
  extraSince: number | null;
  /** Refused by the local limit (denials are looked up apart). */
  refused: boolean;
}

export interface DeviceVerdict {
  /** Per subscription: the devices whose connections must end now (refused or denied). */
  refused: Map<string, Set<string>>;
  /** Devices beyond the limit still in their grace. */
  inGrace: number;
}

export const DEFAULT_DEVICE_GRACE_MS = 20_000;

export class DeviceTracker {
  readonly graceMs: number;
  readonly lingerMs: number;
  readonly refusedMemoryMs: number;
  private limits = new Map<string, number>();
  readonly denialGraceMs: number;
  /** Per subscription: each denied device and since when it is denied. */
  private denials = new Map<string, Map<string, number>>();
  private lastPass = 0;
  /** Per subscription, its devices in order of first sight. */
  private readonly users = new Map<string, Map<string, Device>>();

  constructor(opts: DeviceTrackerOptions = {}) {
    this.graceMs = opts.graceMs ?? DEFAULT_DEVICE_GRACE_MS;
    this.denialGraceMs = opts.denialGraceMs ?? 30_000;
    this.lingerMs = opts.lingerMs ?? 17_000;
    this.refusedMemoryMs = opts.refusedMemoryMs ?? 600_000;
  }

  /** NodeConfig.user_limits: the device limit of each subscription (0 or absent = none). */
  setLimits(limits: Iterable<{ subscriptionId: string; deviceLimit: number }>): void {
    const next = new Map<string, number>();
    for (const l of limits) if (l.deviceLimit > 0) next.set(l.subscriptionId, l.deviceLimit);
    this.limits = next;
  }

  /** DeviceDenials: the whole set, replacing the last one. */
  setDenials(users: UserDevices[], now = Date.now()): void {
    const next = new Map<string, Map<string, number>>();
    for (const u of users) {
      if (u.addresses.length === 0) continue;
      const before = this.denials.get(u.subscriptionId);
      next.set(u.subscriptionId, new Map(u.addresses.map((a) => [a, before?.get(a) ?? now])));
    }
    this.denials = next;
  }

  get limitedUsers(): number {
    return this.limits.size;
  }

  /** Whether the control plane's denial of this device of this user is in force (denied for denialGraceMs). */
  denied(subscriptionId: string, device: string, now = Date.now()): boolean {
    const since = this.denials.get(subscriptionId)?.get(device);
    return since !== undefined && now - since >= this.denialGraceMs;
  }

  /**
   * One pass over every user's live devices at `now`, each with when its client last sent
   * something (`now` when unknown): who is kept, who is in grace, who is refused. Users absent
   * from `live` have no live connection.
   */
  pass(live: Map<string, Map<string, number>>, now: number): DeviceVerdict {
    const refused = new Map<string, Set<string>>();
    let inGrace = 0;
    this.lastPass = now;
    for (const devices of this.users.values()) for (const d of devices.values()) d.live = false;
    for (const [id, list] of live) {
      let devices = this.users.get(id);
      if (!devices) {
        devices = new Map();
        this.users.set(id, devices);
      }
      for (const [name, activeAt] of list) {
        const d = devices.get(name);
        if (d) {
          d.last = Math.max(d.last, activeAt);
          d.live = true;
        } else devices.set(name, { first: now, last: activeAt, live: true, extraSince: null, refused: false });
      }
    }
    for (const [id, devices] of this.users) {
      this.forget(devices, now);
      if (devices.size === 0) {
        this.users.delete(id);
        continue;
      }
      const limit = this.limits.get(id) ?? 0;
      const denied = this.denials.get(id);
      let kept = 0;
      const extra: Device[] = [];
      for (const [name, d] of devices) {
        if (denied?.has(name)) continue;
        if (now - d.last > this.lingerMs) {
          // Silent: takes no place (a refused one stays refused).
          if (!d.refused) d.extraSince = null;
          continue;
        }
        if (limit === 0) {
          d.refused = false;
          d.extraSince = null;
        } else if (!d.refused && kept < limit) {
          kept++;
          d.extraSince = null;
        } else if (!d.refused) extra.push(d);
      }
      // A place freed (a kept device went away, the limit grew): refused devices that are
      // present take it, oldest first.
      if (limit > 0 && kept < limit)
        for (const [name, d] of devices) {
          if (kept >= limit) break;
          if (d.refused && !denied?.has(name) && now - d.last <= this.lingerMs) {
            d.refused = false;
            d.extraSince = null;
            kept++;
          }
        }
      for (const d of extra) {
        d.extraSince ??= now;
        if (now - d.extraSince >= this.graceMs) d.refused = true;
        else inGrace++;
      }
      for (const [name, d] of devices) {
        if (!(d.refused || this.denied(id, name, now))) continue;
        let set = refused.get(id);
        if (!set) {
          set = new Set();
          refused.set(id, set);
        }
        set.add(name);
      }
    }
    return { refused, inGrace };
  }

  /**
   * A new connection of this user from this device, as the access log shows it: true when it
   * must be ended at once (the device is refused or denied). A refused device takes a place
   * that has become free instead; an unknown device is recorded (its grace starts at the next
   * pass if it is extra).
   */
  sighted(subscriptionId: string, device: string, now: number): boolean {
    if (this.denied(subscriptionId, device, now)) return true;
    let devices = this.users.get(subscriptionId);
    if (!devices) {
      devices = new Map();
      this.users.set(subscriptionId, devices);
    }
    const d = devices.get(device);
    if (!d) {
      devices.set(device, { first: now, last: now, live: false, extraSince: null, refused: false });
      return false;
    }
    d.last = now;
    if (!d.refused) return false;
    const limit = this.limits.get(subscriptionId) ?? 0;
    let kept = 0;
    const denied = this.denials.get(subscriptionId);
    for (const [name, o] of devices) if (!o.refused && !denied?.has(name) && now - o.last <= this.lingerMs) kept++;
    if (limit === 0 || kept < limit) {
      d.refused = false;
      d.extraSince = null;
      return false;
    }
    return true;
  }

  /**
   * DeviceReport: each user's devices admitted here (a live connection in the last pass, its
   * client heard within lingerMs, neither refused nor still in its grace), in order of first
   * sight. A device in its grace is left out: the control plane's fleet-wide count has no grace
   * of its own, and a phone moving between networks would be denied there (and held) before the
   * old address fell silent here.
   */
  report(): UserDevices[] {
    const users: UserDevices[] = [];
    for (const [id, devices] of this.users) {
      const addresses: string[] = [];
      // A denial still in its grace is reported: the control plane lifts it once the device fits.
      for (const [name, d] of devices)
        if (
          d.live &&
          !d.refused &&
          d.extraSince === null &&
          !this.denied(id, name, this.lastPass) &&
          this.lastPass - d.last <= this.lingerMs
        )
          addresses.push(name);
      if (addresses.length > 0) users.push({ subscriptionId: id, addresses });
    }
    return users;
  }

  private forget(devices: Map<string, Device>, now: number): void {
    for (const [name, d] of devices) {
      const idle = now - d.last;
      // A silent device with live connections is kept (with its rank) until they end.
      if (d.refused ? idle > this.refusedMemoryMs : !d.live && idle > this.lingerMs) devices.delete(name);
    }
  }
}
