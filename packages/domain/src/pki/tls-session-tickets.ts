import type { Sealer } from '../shared/sealed.ts';

/** TLS 1.3 caps a session ticket's lifetime at 7 days (RFC 8446 4.6.1). */
export const MAX_TLS_SESSION_LIFETIME_SECONDS = 7 * 86_400;

/** What the gateway's TLS layer needs to resume sessions that any replica began (Node's names). */
export interface TlsSessionResumption {
  /** 48 bytes: ticket key name, HMAC key, AES key (tls.createSecureContext `ticketKeys`). */
  ticketKeys: Buffer;
  /** OpenSSL resumes a session only under the context id it was made under. */
  sessionIdContext: string;
  /** How long a ticket resumes, counted from the full handshake that issued it. */
  sessionTimeout: number;
}

/**
 * TLS session resumption between agents and the gateway (issue 17.3): after a gateway restart
 * a fleet reconnects at once, and a resumed handshake skips the certificate signatures and
 * chain checks of both sides.
 *
 * - The ticket keys are derived from the installation key, so every replica and every restarted
 *   process accept the tickets any of them issued. Node holds one ticket key per context (it
 *   cannot accept an old key while issuing with a new one), so a clock-based rotation would void
 *   every outstanding ticket at each turn; the keys change with the installation key. Their
 *   leak would let the holder of a captured ticket resume as that node, which the installation
 *   key already allows (it opens the CA's private key); it decrypts no recorded traffic
 *   (resumption still runs an ECDHE exchange, psk_dhe_ke).
 * - A resumed session carries the client certificate of the handshake that began it; the
 *   gateway admits it by the same checks as any other (issuer, signature and validity against
 *   the clock now, the node's pinned serial, the node enabled): resumption skips the
 *   cryptography of the handshake, never the admission.
 * - `lifetimeSeconds` 0 turns resumption off (full handshakes only).
 */
export function gatewayTlsResumption(secrets: Sealer, lifetimeSeconds: number): TlsSessionResumption | null {
  if (lifetimeSeconds <= 0) return null;
  return {
    ticketKeys: secrets.derive('agent gateway TLS session tickets v1', 48),
    sessionIdContext: 'svc-agent-gateway-v1',
    sessionTimeout: Math.min(lifetimeSeconds, MAX_TLS_SESSION_LIFETIME_SECONDS),
  };
}
