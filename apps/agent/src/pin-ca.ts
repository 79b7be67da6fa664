import { createHash, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, type DetailedPeerCertificate } from 'node:tls';

/**
 * Trust on first contact without trusting the network: the operator hands the agent the SHA-256
 * of the CA certificate (the enroll-token answer's ca_cert_sha256). Before anything is sent, a TLS
 * handshake with the gateway fetches its chain (the gateway sends its CA after the leaf); the CA
 * is the certificate of the chain whose DER hashes to the pin, and it must have signed the leaf.
 * Only then is the token sent, over a channel that trusts that CA alone.
 */
export class PinError extends Error {
  override name = 'PinError';
}

/** "aa:BB:..." or "aabb..." -> lower-case hex without separators. */
export function normalizeSha256(pin: string): string {
  const hex = pin.replaceAll(':', '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new PinError('--ca-sha256 must be 64 hex digits (the SHA-256 of the CA certificate)');
  return hex;
}

export const sha256OfCertificate = (pem: string): string => createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');

/** host:port -> its parts; [v6]:port is accepted. */
export function splitEndpoint(endpoint: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(endpoint) ?? /^([^:\s]+):(\d{1,5})$/.exec(endpoint);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new PinError(`--server must be HOST:PORT, not ${JSON.stringify(endpoint)}`);
  return { host: m[1] as string, port };
}

function peerChain(host: string, port: number, timeoutMs: number): Promise<DetailedPeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      ALPNProtocols: ['h2'],
      // The chain is checked below against the pin, not against the system's CAs.
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => socket.destroy(new PinError(`no TLS handshake with ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const chain = socket.getPeerCertificate(true);
      socket.end();
      resolve(chain);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof PinError ? err : new PinError(`TLS connection to ${host}:${port} failed: ${err.message}`));
    });
  });
}

/** The PEM of the CA the gateway at `endpoint` presents, if its SHA-256 is `pin`. */
export async function fetchPinnedCa(endpoint: string, pin: string, timeoutMs = 15_000): Promise<string> {
  const want = normalizeSha256(pin);
  const { host, port } = splitEndpoint(endpoint);
  const chain = await peerChain(host, port, timeoutMs);
  if (!chain.raw) throw new PinError(`${endpoint} presented no certificate`);
  const leaf = new X509Certificate(chain.raw);
  const seen = new Set<DetailedPeerCertificate>();
  for (let c: DetailedPeerCertificate | undefined = chain; c && !seen.has(c); c = c.issuerCertificate) {
    seen.add(c);
    const cert = new X509Certificate(c.raw);
    if (createHash('sha256').update(c.raw).digest('hex') !== want) continue;
    if (!leaf.verify(cert.publicKey)) throw new PinError('the pinned CA did not sign the gateway’s certificate');
    return cert.toString();
  }
  throw new PinError(`the gateway at ${endpoint} presented no CA with SHA-256 ${want}: wrong --ca-sha256, or not our gateway`);
}
