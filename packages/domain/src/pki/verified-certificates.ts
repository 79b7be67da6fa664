import { createHash } from 'node:crypto';
import type { LoadedCa, NodeIdentity } from './internal-ca.ts';
import { checkPeerCertificate, type PeerCertificate } from './peer-certificate.ts';

interface Verified {
  identity: NodeIdentity;
  notBefore: number;
  notAfter: number;
}

/**
 * checkPeerCertificate (verifyNodeCertificate on the TLS layer's parse) with a memory of the
 * certificates it verified (issue 17.3: parsing
 * and checking the client certificate was the largest single item of a reconnect's CPU on the
 * gateway, and every stream of a node presents the same certificate again).
 *
 * Kept: only certificates that passed every check against `ca` (issuer, signature, key usage,
 * a node id), by the SHA-256 of their exact DER bytes, with their validity period. A hit
 * checks the period against `now` again, so an expired certificate is refused (and forgotten)
 * as on the first check. What is not a property of the certificate (the node disabled,
 * deleted or re-enrolled, the serial no longer the node's) is checked per stream in the
 * admission, as before; nothing of that is cached here. Refusals are not kept, so strangers
 * cannot fill it; at most `maxEntries` (the oldest verified first out).
 */
export function verifiedCertificates(ca: LoadedCa, maxEntries = 200_000): (peer: PeerCertificate, now: Date) => NodeIdentity | null {
  const known = new Map<string, Verified>();
  return (peer, now) => {
    const key = createHash('sha256').update(peer.raw).digest('base64');
    const t = now.getTime();
    const hit = known.get(key);
    if (hit) {
      if (t >= hit.notBefore && t <= hit.notAfter) return hit.identity;
      known.delete(key);
      return null;
    }
    const checked = checkPeerCertificate(ca, peer, now);
    if (!checked) return null;
    if (known.size >= maxEntries) known.delete(known.keys().next().value as string);
    known.set(key, checked);
    return checked.identity;
  };
}
