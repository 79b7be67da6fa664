import { grpcEndpoint } from '@svc/domain';
import { addressScope, type Runtime } from '@svc/runtime';
import { type ControlPlane, createControlPlane } from './server.ts';

/** Starts the gateway from the runtime's config (grpc.*) and logs where agents reach it. */
export async function startGateway(rt: Runtime): Promise<ControlPlane & { port: number }> {
  const g = rt.config.grpc;
  const gateway = createControlPlane(rt.deps);
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
