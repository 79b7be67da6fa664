import { ChannelCredentials, connectivityState } from '@grpc/grpc-js';
import { controlPlaneAgentDefinition, type ServerMessageDecoder } from '@svc/proto';
import { type Channel, createChannel, createClient } from 'nice-grpc';
import { channelReconnectOptions } from './backoff.ts';
import type { Identity } from './identity.ts';
import { ResumableChannelCredentials } from './resumable-credentials.ts';

/**
 * Channels to the gateway. Both trust the pinned internal CA alone (not the system's CAs), and
 * check the gateway's name against its certificate as any TLS client does.
 *
 * The gateway is authenticated, so its snapshots may be large: a desired state of a node with
 * 100,000 users is tens of MB before compression. 512 MiB bounds a broken peer, not a real one.
 */
const MAX_RECEIVE = 512 * 1024 * 1024;

/** Keepalive pings find a dead connection (a NAT that forgot it) within a minute. */
const KEEPALIVE = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc.keepalive_permit_without_calls': 1,
  // Nothing on a node reads channelz; grpc-js would keep traces and counters per connection and call.
  'grpc.enable_channelz': 0,
};

/** For Enroll: TLS, no client certificate. */
export function enrollChannel(server: string, caCertPem: string): Channel {
  return createChannel(server, ChannelCredentials.createSsl(Buffer.from(caCertPem)), KEEPALIVE);
}

/**
 * For Sync: mutual TLS with the node's certificate, resuming the last TLS session. Keep one
 * `credentials` per identity across reconnects (syncCredentials): it holds the session.
 */
export function syncChannel(id: Identity, credentials: ChannelCredentials = syncCredentials(id)): Channel {
  return createChannel(id.server, credentials, {
    ...KEEPALIVE,
    'grpc.max_receive_message_length': MAX_RECEIVE,
    // The channel lives across streams and reconnects on its own after a failed attempt: within
    // the contract's 1-60 s (grpc-js's own default ceiling is 120 s), from a first delay each
    // agent draws (channelReconnectOptions: a fleet does not come back in waves).
    ...channelReconnectOptions(),
  });
}

export const syncCredentials = (id: Identity): ResumableChannelCredentials =>
  new ResumableChannelCredentials({ caCertPem: id.caCertPem, keyPem: id.keyPem, certPem: id.certPem });

/** The client of a channel; Sync's messages decoded by `decoder` when given (one per agent, kept across streams). */
export const gatewayClient = (channel: Channel, decoder?: ServerMessageDecoder) =>
  createClient(controlPlaneAgentDefinition(decoder), channel);

/**
 * Resolves true once the channel is connected (TLS done), false at the deadline or on shutdown.
 * A call on a channel that is backing off after a failed connection attempt fails at once with
 * that old error, even when the gateway is back; waiting for the channel instead lets it connect
 * on its own schedule (1-60 s, jitter), one connection per agent.
 */
export async function connected(channel: Channel, deadline: number): Promise<boolean> {
  for (;;) {
    const state = channel.getConnectivityState(true);
    if (state === connectivityState.READY) return true;
    if (state === connectivityState.SHUTDOWN || Date.now() >= deadline) return false;
    const changed = await new Promise<boolean>((resolve) => channel.watchConnectivityState(state, deadline, (err) => resolve(!err)));
    if (!changed) return false;
  }
}
