import * as grpc from '@grpc/grpc-js';
import { type LoadedCa, type NodeIdentity, verifiedCertificates } from '@svc/domain';

/** Metadata key carrying the verified identity from the interceptor to the handlers. */
export const IDENTITY_METADATA = 'x-svc-node-identity';

/**
 * grpc-js server interceptor (needs >= 1.14 for getAuthContext): verifies the client
 * certificate against our CA (once per certificate: verifiedCertificates) (the TLS layer requests one without checking it) and hands the
 * node identity to the handlers as metadata. Client-sent metadata of the same name is
 * removed first, so it cannot be imitated. A call of `authenticatedPath` (Sync) without a
 * verified identity is answered UNAUTHENTICATED here, from its headers: its handler never
 * starts and not one byte of its messages is read (issue 12.5: the large Sync receive limit
 * is for authenticated agents only).
 */
export function identityInterceptor(ca: LoadedCa, now: () => Date, authenticatedPath?: string): grpc.ServerInterceptor {
  // A node's certificate is verified once, then known by its SHA-256 (validity rechecked on
  // every call); standing (disabled, re-enrolled) is the admission's, per stream.
  const verify = verifiedCertificates(ca);
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next(
          new grpc.ServerListenerBuilder()
            .withOnReceiveMetadata((md, mdNext) => {
              md.remove(IDENTITY_METADATA);
              const peer = call.getAuthContext().sslPeerCertificate;
              const identity = peer?.raw ? verify(peer, now()) : null;
              if (identity) md.set(IDENTITY_METADATA, JSON.stringify(identity));
              else if (method.path === authenticatedPath) {
                call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS, metadata: null });
                return;
              }
              mdNext(md);
            })
            .build(),
        ),
    });
}

export const UNAUTHENTICATED_DETAILS = 'a client certificate issued by this control plane is required';

export function identityOf(metadata: { get(key: string): unknown }): NodeIdentity | null {
  const raw = metadata.get(IDENTITY_METADATA);
  if (typeof raw !== 'string') return null;
  const v = JSON.parse(raw) as { node_id: string; serial: string; not_after: string };
  return { node_id: v.node_id, serial: v.serial, not_after: new Date(v.not_after) };
}
