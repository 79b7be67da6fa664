import { writeAudit } from '../audit/write-audit.ts';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { randomToken, sha256Hex } from '../shared/secrets.ts';

/** An enrollment token is valid this long after issue. */
export const ENROLL_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

export interface EnrollTokenView {
  /** Shown once: only its SHA-256 is stored. */
  token: string;
  expires_at: string;
  node_id: string;
}

/**
 * Issues the node's one-time enrollment token (32 random bytes, base64url), or replaces the
 * previous one: the node row holds a single hash, so the old token is dead at commit.
 */
export async function issueEnrollToken(ctx: DomainContext, nodeId: string): Promise<EnrollTokenView> {
  const token = randomToken(32);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const expires = new Date(now.getTime() + ENROLL_TOKEN_TTL_MS);
    const previous = await trx.selectFrom('nodes').select('enroll_token_hash').where('id', '=', nodeId).forUpdate().executeTakeFirst();
    if (!previous) throw new NotFoundError('node', nodeId);
    await trx
      .updateTable('nodes')
      .set({ enroll_token_hash: sha256Hex(token), enroll_token_expires_at: expires, updated_at: now })
      .where('id', '=', nodeId)
      .execute();
    await writeAudit(trx, ctx, {
      action: 'node.enroll_token_issued',
      entity_type: 'node',
      entity_id: nodeId,
      details: { expires_at: expires.toISOString(), replaced_previous: previous.enroll_token_hash !== null },
    });
    return { token, expires_at: expires.toISOString(), node_id: nodeId };
  });
}
