import type * as grpc from '@grpc/grpc-js';

type Ca = grpc.experimental.CaCertificateUpdate;
type Identity = grpc.experimental.IdentityCertificateUpdate;

/**
 * The server's TLS material for grpc-js's certificate-provider credentials: the TLS layer
 * then *requests* a client certificate without requiring one, so Enroll (no client
 * certificate) and Sync (mTLS) share one port. Listeners are called asynchronously (grpc-js
 * drops every connection when they are called synchronously), and one object serves both the
 * CA and the identity: grpc-js 1.14.3 swaps the two provider arguments internally.
 * setIdentity rotates the server certificate without a restart.
 */
export class TlsMaterialProvider implements grpc.experimental.CertificateProvider {
  private readonly caListeners = new Set<grpc.experimental.CaCertificateUpdateListener>();
  private readonly idListeners = new Set<grpc.experimental.IdentityCertificateUpdateListener>();

  constructor(
    private ca: Ca,
    private identity: Identity,
  ) {}

  addCaCertificateListener(l: grpc.experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(l);
    setImmediate(() => l(this.ca));
  }
  removeCaCertificateListener(l: grpc.experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(l);
  }
  addIdentityCertificateListener(l: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.idListeners.add(l);
    setImmediate(() => l(this.identity));
  }
  removeIdentityCertificateListener(l: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.idListeners.delete(l);
  }
  setIdentity(identity: Identity): void {
    this.identity = identity;
    for (const l of this.idListeners) setImmediate(() => l(identity));
  }
}
