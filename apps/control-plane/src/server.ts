import * as grpc from '@grpc/grpc-js';
import { type DomainDeps, ensureCertificateAuthority, issueServerCertificate } from '@svc/domain';
import { ControlPlaneDefinition } from '@svc/proto';
import { createServer } from 'nice-grpc';
import { TlsMaterialProvider } from './cert-provider.ts';
import { controlPlaneService } from './service.ts';

export interface ControlPlaneOptions {
  host: string;
  port: number;
  /** Names and addresses agents dial; they go into the server certificate. */
  tlsHosts: readonly string[];
}

/** The agent gateway: one TLS port, Enroll without and Sync with a client certificate. */
export function createControlPlane(deps: DomainDeps, opts: ControlPlaneOptions) {
  const server = createServer({ 'grpc.default_compression_algorithm': 2 /* gzip */ });
  let port = 0;
  return {
    async start(): Promise<{ port: number; caCertPem: string }> {
      const ca = await ensureCertificateAuthority(deps);
      const identity = await issueServerCertificate(ca, opts.tlsHosts, deps.clock.now());
      const provider = new TlsMaterialProvider(
        { caCertificate: Buffer.from(ca.certPem) },
        { certificate: Buffer.from(identity.certPem), privateKey: Buffer.from(identity.keyPem) },
      );
      server.add(ControlPlaneDefinition, controlPlaneService(deps, ca));
      const creds = grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false);
      port = await server.listen(`${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`, creds);
      // The provider's listeners fire on the next turn; a connection before that finds no TLS context.
      await new Promise((r) => setImmediate(r));
      return { port, caCertPem: ca.certPem };
    },
    async stop(): Promise<void> {
      await server.shutdown();
    },
  };
}
