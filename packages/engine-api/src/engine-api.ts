import { ChannelCredentials } from '@grpc/grpc-js';
import type { InboundUser } from '@svc/proto';
import { createChannel, createClient } from 'nice-grpc';
import { engineAccount } from './accounts.ts';
import { toEngineApiError } from './errors.ts';
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

    close() {
      channel.close();
    },
  };
}
