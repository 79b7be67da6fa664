import { X509Certificate } from 'node:crypto';
import { UnauthenticatedError } from '../errors.ts';
import { type LoadedCa, signNodeCsr } from '../pki/internal-ca.ts';
import type { DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** Serial (upper-case hex) and expiry of a certificate we issued. */
export function certificateFacts(pem: string): { serial: string; not_after: Date } {
  const c = new X509Certificate(pem);
  return { serial: c.serialNumber.toUpperCase(), not_after: new Date(c.validTo) };
}

/**
 * CertRenewal (spec 4.1 rule 4, 5.1): the CSR of a new key made on the node is signed for
 * the same CN (the node id). The new certificate becomes the node's identity; the one it
 * replaces stays accepted until the agent connects with the new one, so a crash between
 * CertIssued and the agent's atomic swap never locks the node out. A bad CSR is a
 * validation error (INVALID_ARGUMENT) and changes nothing.
 */
export async function renewAgentCertificate(
  deps: DomainDeps,
  ca: LoadedCa,
  nodeId: string,
  csrPem: string,
  meta: { ip?: string | null } = {},
): Promise<{ client_cert_pem: string }> {
  const now = deps.clock.now();
  const pem = await signNodeCsr(ca, csrPem, nodeId, now);
  const facts = certificateFacts(pem);
  await unitOfWork({ ...deps, actor: { type: 'node', id: nodeId, ip: meta.ip ?? null } }, async (uow) => {
    const trx = uow.db;
    const node = await trx
      .selectFrom('nodes')
      .select(['id', 'admin_status', 'cert_serial'])
      .where('id', '=', nodeId)
      .forUpdate()
      .executeTakeFirst();
    if (!node || node.admin_status !== 'enabled') throw new UnauthenticatedError('the node is deleted or disabled');
    await trx
      .updateTable('nodes')
      .set({ cert_previous_serial: node.cert_serial, cert_serial: facts.serial, cert_not_after: facts.not_after, updated_at: now })
      .where('id', '=', nodeId)
      .execute();
    uow.audit({
      action: 'node.certificate_renewed',
      entity_type: 'node',
      entity_id: nodeId,
      details: { serial: facts.serial, not_after: facts.not_after.toISOString(), replaced_serial: node.cert_serial },
    });
  });
  return { client_cert_pem: pem };
}
