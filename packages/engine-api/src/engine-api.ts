import { ChannelCredentials } from '@grpc/grpc-js';
import type { InboundUser } from '@svc/proto';
import { createChannel, createClient } from 'nice-grpc';
import { engineAccount } from './accounts.ts';
import { EngineApiError, toEngineApiError } from './errors.ts';
import { type EngineFlavour, packagePrefixOf, reprefix, withPrefix } from './flavour.ts';
import { AddUserOperation, HandlerServiceDefinition, RemoveUserOperation } from './gen/xray/app/proxyman/command/command.ts';
import { StatsServiceDefinition } from './gen/xray/app/stats/command/command.ts';

/**
 * The agent's client of the engine's local gRPC API (the `api` inbound the rendered config
 * opens on 127.0.0.1, plaintext): users added to and removed from running inbounds without a
 * restart, per-user traffic counters, and the engine process's runtime figures. Every failure
 * is an EngineApiError whose `kind` says what the agent can do about it.
 */

export interface EngineApiOptions {
  /** host:port of the API inbound. */
  address: string;
  flavour: EngineFlavour;
  /** Overrides the flavour's proto package prefix (e.g. a fork's). */
  packagePrefix?: string;
  /** Per call; default 10 s. */
  timeoutMs?: number;
}

export interface UserTraffic {
  email: string;
  uplink: bigint;
  downlink: bigint;
}

export interface EngineSysStats {
  uptimeSeconds: number;
  numGoroutine: number;
  allocBytes: bigint;
  sysBytes: bigint;
}

export interface EngineApi {
  /** Adds `user` (level 0, the level with traffic counters) to the inbound tagged `inboundTag`. */
  addUser(inboundTag: string, user: InboundUser): Promise<void>;
  /** Removes the user: new connections are refused; open ones go on until they end. */
  removeUser(inboundTag: string, email: string): Promise<void>;
  /** Traffic since the engine started (or the last reset), per email, sorted by email. */
  userTraffic(opts?: { reset?: boolean }): Promise<UserTraffic[]>;
  sysStats(): Promise<EngineSysStats>;
  /**
   * Every online user's client addresses as the engine counts them (email -> address -> when a
   * connection from it last started, Unix ms): Xray's GetUsersStats (v26.4.13 on; its online
   * maps hold an address while a connection from it lives, any transport). Null when the engine
   * has no such call (older Xray, v2ray 4: UNIMPLEMENTED).
   */
  onlineAddresses(): Promise<Map<string, Map<string, number>> | null>;
  close(): void;
}

const USER_COUNTER = /^user>>>(.+)>>>traffic>>>(uplink|downlink)$/;

export function createEngineApi(opts: EngineApiOptions): EngineApi {
  const prefix = opts.packagePrefix ?? packagePrefixOf(opts.flavour);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const channel = createChannel(opts.address, ChannelCredentials.createInsecure(), {
    // The engine is local and restarts (config changes, crashes): grpc-js would otherwise back off
    // up to 120 s between reconnects and answer UNAVAILABLE meanwhile, even once the engine is up.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1_000,
    // Counters and online addresses of every user in one answer: 100,000 users is ~12 MB, over grpc-js's 4 MB default.
    'grpc.max_receive_message_length': 256 * 2 ** 20,
  });
  const handler = createClient(withPrefix(HandlerServiceDefinition, prefix), channel);
  const stats = createClient(withPrefix(StatsServiceDefinition, prefix), channel);

  async function call<T>(name: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      return await run(signal);
    } catch (err) {
      throw toEngineApiError(err, name, signal);
    }
  }

  return {
    async addUser(inboundTag, user) {
      const account = engineAccount(user, opts.flavour, prefix);
      const operation = {
        type: reprefix(AddUserOperation.$type, prefix),
        value: AddUserOperation.encode({ user: { level: 0, email: user.email, account } }).finish(),
      };
      await call(`add user ${user.email} to ${inboundTag}`, (signal) => handler.alterInbound({ tag: inboundTag, operation }, { signal }));
    },

    async removeUser(inboundTag, email) {
      const operation = {
        type: reprefix(RemoveUserOperation.$type, prefix),
        value: RemoveUserOperation.encode({ email }).finish(),
      };
      await call(`remove user ${email} from ${inboundTag}`, (signal) => handler.alterInbound({ tag: inboundTag, operation }, { signal }));
    },

    async userTraffic({ reset = false } = {}) {
      const { stat } = await call('query user traffic', (signal) => stats.queryStats({ pattern: 'user>>>', reset }, { signal }));
      const byEmail = new Map<string, UserTraffic>();
      for (const { name, value } of stat) {
        const match = USER_COUNTER.exec(name);
        if (!match) continue;
        const email = match[1] as string;
        const traffic = byEmail.get(email) ?? { email, uplink: 0n, downlink: 0n };
        traffic[match[2] as 'uplink' | 'downlink'] = value;
        byEmail.set(email, traffic);
      }
      return [...byEmail.values()].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
    },

    async sysStats() {
      const s = await call('system stats', (signal) => stats.getSysStats({}, { signal }));
      return { uptimeSeconds: s.Uptime, numGoroutine: s.NumGoroutine, allocBytes: s.Alloc, sysBytes: s.Sys };
    },

    async onlineAddresses() {
      let users: Awaited<ReturnType<typeof stats.getUsersStats>>['users'];
      try {
        ({ users } = await call('online addresses', (signal) => stats.getUsersStats({ includeTraffic: false, reset: false }, { signal })));
      } catch (err) {
        if (err instanceof EngineApiError && err.kind === 'unsupported') return null;
        throw err;
      }
      const out = new Map<string, Map<string, number>>();
      for (const u of users) {
        if (u.email === '' || u.ips.length === 0) continue;
        const ips = out.get(u.email) ?? new Map<string, number>();
        for (const e of u.ips) if (e.ip !== '') ips.set(e.ip, Number(e.lastSeen) * 1000);
        out.set(u.email, ips);
      }
      return out;
    },

    close() {
      channel.close();
    },
  };
}
