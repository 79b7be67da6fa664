import { type DomainDeps, enrollNode, type LoadedCa } from '@svc/domain';
import { ServerError, type ServiceImplementation } from 'nice-grpc';
import { toGrpcStatus } from './errors.ts';
import { describeFault, type GuardedWire } from './inbound-guard.ts';
import { peerIp } from './peer.ts';
import { type SyncDeps, syncHandler } from './sync-stream.ts';

/**
 * svc.controlplane.v1.ControlPlane: thin handlers over domain use cases, each request with the
 * fault its decoder found (inbound-guard.ts). Typed against the wire definition, so every response is a complete message (it is encoded as is, no
 * fromPartial copy).
 */
export function controlPlaneService(deps: DomainDeps, ca: LoadedCa, sync: SyncDeps): ServiceImplementation<GuardedWire> {
  return {
    async enroll({ message: req, fault }, ctx) {
      if (fault) throw new ServerError(fault.code, `invalid EnrollRequest (${describeFault(fault)})`);
      const ip = peerIp(ctx.peer);
      try {
        const e = await enrollNode(
          deps,
          ca,
          { token: req.token, csr_pem: req.csrPem, hostname: req.hostname, agent_version: req.agentVersion },
          { ip },
        );
        deps.log.info(
          { node_id: e.node_id, node_name: e.node_name, address: ip, hostname: req.hostname, agent_version: req.agentVersion },
          `agent enrolled: node ${e.node_name} (${e.node_id}) from ${ip ?? 'an unknown address'}, agent version ${req.agentVersion}`,
        );
        return { nodeId: e.node_id, clientCertPem: e.client_cert_pem, caCertPem: e.ca_cert_pem };
      } catch (err) {
        throw toGrpcStatus(err, deps.log, 'enrollment failed');
      }
    },
    sync: syncHandler(sync),
  };
}
