import { createHash, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Config } from '@svc/config';
import { NotFoundError } from '../errors.ts';
import { ensureCertificateAuthority } from '../pki/ca-store.ts';
import type { DomainContext } from '../shared/context.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

export interface EnrollTokenView {
  /** Shown once: only its SHA-256 is stored. */
  token: string;
  expires_at: string;
  node_id: string;
  /** host:port the agent dials (grpc.public_endpoint, else the first public host and grpc.port). */
  grpc_endpoint: string;
  /** The internal CA: the agent pins the server with it from its very first connection. */
  ca_cert_pem: string;
  /** SHA-256 of the CA certificate (DER), hex: for checking a copied PEM by eye. */
  ca_cert_sha256: string;
  /** The one line that turns a server into this node (installCommand). */
  install_command: string;
}

/** Where the control plane serves the install script (apps/admin-api agent-install). */
export const INSTALL_SCRIPT_PATH = '/agent/install.sh';

/**
 * The line an operator runs on the server, as root: the install script from this control plane
 * (its public base URL), the token and the CA hash as arguments of the script, never in the URL
 * (a proxy may log or cache a URL). A token is base64url: nothing in it needs quoting.
 */
export function installCommand(config: Config, token: string, caSha256: string): string {
  return `curl -fsSL ${publicBaseUrl(config)}${INSTALL_SCRIPT_PATH} | sh -s -- --token ${token} --ca-sha256 ${caSha256}`;
}

/** Where agents reach the gateway, as handed out with enrollment tokens. */
export function grpcEndpoint(config: Config): string {
  if (config.grpc.public_endpoint) return config.grpc.public_endpoint;
  const host = config.grpc.public_hosts[0] as string;
  return `${isIP(host) === 6 ? `[${host}]` : host}:${config.grpc.port}`;
}

/**
 * Issues the node's one-time enrollment token (32 random bytes, base64url; valid for
 * grpc.enroll_token_ttl_seconds), or replaces the
 * previous one: the node row holds a single hash, so the old token is dead at commit.
 */
export async function issueEnrollToken(ctx: DomainContext, nodeId: string): Promise<EnrollTokenView> {
  const token = randomToken(32);
  // A refused call changes nothing: the CA, made once on first use, is not made for a node
  // that does not exist (the check under lock below stays the one that counts).
  if (!(await ctx.db.selectFrom('nodes').select('id').where('id', '=', nodeId).executeTakeFirst())) {
    throw new NotFoundError('node', nodeId);
  }
  const ca = await ensureCertificateAuthority(ctx);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const expires = new Date(now.getTime() + ctx.config.grpc.enroll_token_ttl_seconds * 1000);
    const previous = await trx.selectFrom('nodes').select('enroll_token_hash').where('id', '=', nodeId).forUpdate().executeTakeFirst();
    if (!previous) throw new NotFoundError('node', nodeId);
    await trx
      .updateTable('nodes')
      .set({ enroll_token_hash: sha256Hex(token), enroll_token_expires_at: expires, updated_at: now })
      .where('id', '=', nodeId)
      .execute();
    uow.audit({
      action: 'node.enroll_token_issued',
      entity_type: 'node',
      entity_id: nodeId,
      details: { expires_at: expires.toISOString(), replaced_previous: previous.enroll_token_hash !== null },
    });
    const caSha256 = createHash('sha256').update(new X509Certificate(ca.certPem).raw).digest('hex');
    return {
      token,
      expires_at: expires.toISOString(),
      node_id: nodeId,
      grpc_endpoint: grpcEndpoint(ctx.config),
      ca_cert_pem: ca.certPem,
      ca_cert_sha256: caSha256,
      install_command: installCommand(ctx.config, token, caSha256),
    };
  });
}
