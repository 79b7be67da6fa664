import { grpcEndpoint } from '@svc/domain';
import { addressScope, type Runtime } from '@svc/runtime';
import { type ControlPlane, createControlPlane } from './server.ts';

/** Starts the gateway from the runtime's config (grpc.*) and logs where agents reach it. */
export async function startGateway(rt: Runtime): Promise<ControlPlane & { port: number }> {
  const g = rt.config.grpc;
  const gateway = createControlPlane(rt.deps, {
    host: g.host,
    port: g.port,
    tlsHosts: g.public_hosts,
    maxSendMessageBytes: g.max_send_message_bytes,
    maxReceiveMessageBytes: g.max_receive_message_bytes,
    timing: {
      heartbeatMs: g.replica_heartbeat_seconds * 1000,
      reconcileMs: g.replica_heartbeat_seconds * 1000,
      staleAfterMs: g.replica_heartbeat_seconds * 4000,
    },
  });
  const { port, addresses } = await gateway.start();
  const endpoint = grpcEndpoint(rt.config);
  const scope = addresses.length === 1 ? addressScope(addresses[0] as string) : null;
  rt.log.info(
    {
      grpc_port: port,
      grpc_host: g.host,
      addresses,
      public_hosts: g.public_hosts,
      grpc_endpoint: endpoint,
      replica: gateway.replicaId,
    },
    `agent gateway listening on ${addresses.join(', ')}${scope ? ` (${scope})` : ''}; agents dial ${endpoint}`,
  );
  return Object.assign(gateway, { port });
}
