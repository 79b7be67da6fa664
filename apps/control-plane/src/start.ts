import { grpcEndpoint } from '@svc/domain';
import type { Runtime } from '@svc/runtime';
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
  const { port } = await gateway.start();
  rt.log.info(
    {
      grpc_port: port,
      grpc_host: g.host,
      public_hosts: g.public_hosts,
      grpc_endpoint: grpcEndpoint(rt.config),
      replica: gateway.replicaId,
    },
    `agent gateway listening on ${g.host}:${port}`,
  );
  return Object.assign(gateway, { port });
}
