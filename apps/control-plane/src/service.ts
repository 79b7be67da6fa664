import { type DomainDeps, enrollNode, type LoadedCa } from '@svc/domain';
import type { ControlPlaneServiceImplementation } from '@svc/proto';
import { toGrpcError } from './errors.ts';
import { peerIp } from './peer.ts';
import { type SyncDeps, syncHandler } from './sync-stream.ts';

/** svc.controlplane.v1.ControlPlane: thin handlers over domain use cases. */
export function controlPlaneService(deps: DomainDeps, ca: LoadedCa, sync: SyncDeps): ControlPlaneServiceImplementation {
  return {
    async enroll(req, ctx) {
      try {
        return await enrollNode(
          deps,
          ca,
          { token: req.token, csr_pem: req.csrPem, hostname: req.hostname, agent_version: req.agentVersion },
          { ip: peerIp(ctx.peer) },
        ).then((e) => ({ nodeId: e.node_id, clientCertPem: e.client_cert_pem, caCertPem: e.ca_cert_pem }));
      } catch (err) {
        throw toGrpcError(err);
      }
    },
    sync: syncHandler(sync),
  };
}
