import { X509Certificate } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { ClientError, Status } from 'nice-grpc';
import { enrollChannel, gatewayClient } from './gateway-channel.ts';
import { certificateProblem, type Identity, loadIdentity, newKeyAndCsr, saveIdentity } from './identity.ts';
import { fetchPinnedCa, PinError, splitEndpoint } from './pin-ca.ts';
import { ensurePrivateDir } from './state-files.ts';
import { AGENT_VERSION } from './version.ts';

/**
 * `svc-agent enroll`: turns a one-time token into the node's identity. The CA is pinned by its
 * SHA-256 before the token is sent; the key is made here and only the CSR leaves the node; the
 * answer is checked (the CA is the pinned one, the certificate is for our key and names the
 * node) before the identity is stored.
 */
export interface EnrollOptions {
  server: string;
  token: string;
  caSha256: string;
  stateDir: string;
  /** Replace an identity that is already there (a node enrolled again with a new token). */
  force?: boolean;
  hostname?: string;
}

export class EnrollError extends Error {
  override name = 'EnrollError';
}

export async function enroll(opts: EnrollOptions): Promise<Identity> {
  splitEndpoint(opts.server);
  if (opts.token.trim() === '') throw new EnrollError('--token is empty');
  const existing = await loadIdentity(opts.stateDir).catch(() => null);
  if (existing && !opts.force)
    throw new EnrollError(
      `${opts.stateDir} already holds the identity of node ${existing.nodeId}; pass --force to replace it (the old certificate stops being used)`,
    );
  const caCertPem = await fetchPinnedCa(opts.server, opts.caSha256);
  const { csrPem, keyPem } = await newKeyAndCsr();
  const channel = enrollChannel(opts.server, caCertPem);
  let res: Awaited<ReturnType<ReturnType<typeof gatewayClient>['enroll']>>;
  try {
    res = await gatewayClient(channel).enroll(
      { token: opts.token.trim(), csrPem, hostname: opts.hostname ?? osHostname(), agentVersion: AGENT_VERSION },
      { signal: AbortSignal.timeout(30_000) },
    );
  } catch (err) {
    if (err instanceof ClientError && err.code === Status.UNAUTHENTICATED)
      throw new EnrollError('the gateway refused the token: it is invalid, expired or already used (issue a new one)');
    if (err instanceof ClientError) throw new EnrollError(`Enroll failed: ${Status[err.code]}: ${err.details}`);
    throw err;
  } finally {
    channel.close();
  }
  if (!sameCertificate(res.caCertPem, caCertPem)) throw new PinError('Enroll answered with a CA other than the pinned one');
  const problem = certificateProblem(res.clientCertPem, keyPem, caCertPem, res.nodeId);
  if (problem) throw new EnrollError(`Enroll answered with an unusable certificate: ${problem}`);
  const identity: Identity = { nodeId: res.nodeId, server: opts.server, caCertPem, certPem: res.clientCertPem, keyPem };
  await ensurePrivateDir(opts.stateDir);
  await saveIdentity(opts.stateDir, identity);
  return identity;
}

function sameCertificate(a: string, b: string): boolean {
  try {
    return new X509Certificate(a).raw.equals(new X509Certificate(b).raw);
  } catch {
    return false;
  }
}
