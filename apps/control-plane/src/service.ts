import { type DomainDeps, enrollNode, type LoadedCa } from '@svc/domain';
import type { ControlPlaneServiceImplementation } from '@svc/proto';
import { ServerError, Status } from 'nice-grpc';
import { toGrpcError } from './errors.ts';

const peerIp = (peer: string): string | null => /^(?:ipv[46]:)?\[?([^\]]+?)\]?:\d+$/.exec(peer)?.[1] ?? null;

/** svc.controlplane.v1.ControlPlane: thin handlers over domain use cases. */
export function controlPlaneService(deps: DomainDeps, ca: LoadedCa): ControlPlaneServiceImplementation {
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
    // biome-ignore lint/correctness/useYield: the stream is the next piece of the agent gateway.
    async *sync() {
      throw new ServerError(Status.UNIMPLEMENTED, 'Sync is not available in this version yet');
    },
  };
}
