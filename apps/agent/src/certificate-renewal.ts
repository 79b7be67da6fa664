import type { AgentMessage } from '@svc/proto';
import type { Logger } from 'pino';
import { certificateProblem, type Identity, newKeyAndCsr, renewalSchedule, saveIdentity } from './identity.ts';

export interface CertificateRenewalDeps {
  stateDir: string;
  identity: () => Identity;
  /** The renewed identity, saved: the next stream uses it. */
  renewed: (next: Identity) => void;
  send: (m: AgentMessage) => boolean;
  connected: () => boolean;
  log: Logger;
  now: () => number;
}

/**
 * The node's certificate renewed over the stream at two thirds of its lifetime: a new key and
 * CSR sent as CertRenewal, the certificate that comes back checked against the key, the CA and
 * the node id before it replaces the current one. One request at a time; a stream that closes
 * forgets the request (the next stream asks again).
 */
export class CertificateRenewal {
  private pending: { keyPem: string } | null = null;

  constructor(private readonly deps: CertificateRenewalDeps) {}

  async maybeRenew(): Promise<void> {
    if (this.pending || !this.deps.connected()) return;
    const { renewAt } = renewalSchedule(this.deps.identity().certPem);
    if (this.deps.now() < renewAt.getTime()) return;
    const { csrPem, keyPem } = await newKeyAndCsr();
    this.pending = { keyPem };
    if (!this.deps.send({ certRenewal: { csrPem } })) this.pending = null;
    else this.deps.log.info({ renew_at: renewAt.toISOString() }, 'certificate renewal requested');
  }

  /** The stream closed: an answer to the request would not come on it. */
  forget(): void {
    this.pending = null;
  }

  async issued(certPem: string, error: string): Promise<void> {
    const { log } = this.deps;
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    if (certPem === '') {
      log.warn({ error }, 'certificate renewal refused; the current certificate stays');
      return;
    }
    const identity = this.deps.identity();
    const problem = certificateProblem(certPem, pending.keyPem, identity.caCertPem, identity.nodeId);
    if (problem) {
      log.error({ problem }, 'renewed certificate not usable; the current certificate stays');
      return;
    }
    const next = { ...identity, certPem, keyPem: pending.keyPem };
    await saveIdentity(this.deps.stateDir, next);
    this.deps.renewed(next);
    log.info({ not_after: renewalSchedule(certPem).notAfter.toISOString() }, 'certificate renewed (used from the next stream)');
  }
}
