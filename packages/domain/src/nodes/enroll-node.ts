import { AGENT_RELEASE, agentBecameOutdated, assertAgentVersionAllowed } from '../agents/agent-version.ts';
import { certificateFacts } from '../agents/renew-agent-certificate.ts';
import { recordAudit } from '../audit/record-audit.ts';
import { enforceRateLimit } from '../auth/rate-limit.ts';
import { UnauthenticatedError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { type LoadedCa, signNodeCsr } from '../pki/internal-ca.ts';
import type { DomainDeps } from '../shared/context.ts';
import { sha256Hex } from '../shared/secrets.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

export interface EnrollInput {
  token: string;
  csr_pem: string;
  hostname: string;
  agent_version: string;
}

export interface Enrollment {
  node_id: string;
  /** For the gateway's log line (an operator knows nodes by name). */
  node_name: string;
  client_cert_pem: string;
  ca_cert_pem: string;
}

/**
 * Enroll (spec 4.1, 5.1): the one-time token from the panel names the node; the agent's CSR
 * (its key never leaves the node) is signed into the node's client certificate. The token is
 * consumed in the same transaction, so two agents racing with one token get one certificate.
 * Invalid, expired and used tokens look the same from outside: UNAUTHENTICATED. A CSR that
 * does not verify is a validation error and leaves the token usable. Enrolling again retires
 * the node's previous certificate (and ends a stream opened with it); the new agent's usage
 * report ids start over. The agent's version refuses nothing unless the operator set a floor
 * (grpc.min_agent_version); an outdated one raises node.agent_outdated.
 */
export async function enrollNode(deps: DomainDeps, ca: LoadedCa, input: EnrollInput, meta: { ip?: string | null }): Promise<Enrollment> {
  const hash = sha256Hex(input.token);
  // Guessing a 32-byte token is hopeless; the limit keeps refusals from flooding the audit log.
  await enforceRateLimit(deps, 'enroll', deps.config.rate_limits.enroll, { ip: meta.ip, subject: hash.slice(0, 32) });
  const now = deps.clock.now();
  const result = await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const node = await trx
      .selectFrom('nodes')
      .select(['id', 'name', 'enroll_token_expires_at', 'admin_status', 'agent_version'])
      .where('enroll_token_hash', '=', hash)
      .forUpdate()
      .executeTakeFirst();
    if (!node || !node.enroll_token_expires_at || node.enroll_token_expires_at <= now)
      return { refused: node ? 'expired' : 'unknown' } as const;
    // The operator's opt-in floor, only once the token proved who is asking; refusing rolls the
    // unit back, so the token stays good for the upgraded agent.
    assertAgentVersionAllowed(input.agent_version, deps.config.grpc.min_agent_version);
    const cert = await signNodeCsr(ca, input.csr_pem, node.id, now);
    const facts = certificateFacts(cert);
    await trx
      .updateTable('nodes')
      .set({
        enroll_token_hash: null,
        enroll_token_expires_at: null,
        hostname: input.hostname.slice(0, 255) || null,
        agent_version: input.agent_version.slice(0, 64) || null,
        // The new certificate is the node's only identity: an older one (a previous install) is refused.
        cert_serial: facts.serial,
        cert_previous_serial: null,
        cert_not_after: facts.not_after,
        // A fresh agent numbers its usage reports from the start again.
        last_usage_report_id: 0,
        last_cutoff_report_id: 0,
        updated_at: now,
      })
      .where('id', '=', node.id)
      .execute();
    uow.nodesChanged([node.id]); // a stream still open with the old identity ends
    const agentVersion = input.agent_version.slice(0, 64);
    if (agentBecameOutdated(node.agent_version, agentVersion))
      await recordEvent(
        uow,
        {
          type: 'node.agent_outdated',
          payload: {
            node_id: node.id,
            name: node.name,
            agent_version: agentVersion,
            previous_agent_version: node.agent_version,
            release: AGENT_RELEASE,
          },
        },
        now,
      );
    uow.audit(
      {
        action: 'node.enrolled',
        entity_type: 'node',
        entity_id: node.id,
        details: { hostname: input.hostname.slice(0, 255), agent_version: input.agent_version.slice(0, 64) },
      },
      { type: 'node', id: node.id, ip: meta.ip ?? null },
    );
    return { enrollment: { node_id: node.id, node_name: node.name, client_cert_pem: cert, ca_cert_pem: ca.certPem } } as const;
  });
  if ('refused' in result) {
    await recordAudit(
      { ...deps, actor: { type: 'anonymous', id: null, ip: meta.ip ?? null } },
      {
        action: 'node.enroll_refused',
        details: { reason: result.refused },
      },
    );
    throw new UnauthenticatedError('invalid, expired or used enrollment token');
  }
  return result.enrollment;
}
