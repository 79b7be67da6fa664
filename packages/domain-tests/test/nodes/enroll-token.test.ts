import { createHash, X509Certificate } from 'node:crypto';
import { issueEnrollToken } from '@svc/domain';
import { createDomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');
const rowOf = (id: string) => t.bed.deps.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('issueEnrollToken', () => {
  it('issues a 32-byte base64url token valid 24 h, stores only its hash, and audits without it', async () => {
    const node = await t.f.node();
    const issued = await issueEnrollToken(t.bed.ctx(), node.id);
    expect(issued.node_id).toBe(node.id);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(issued.token, 'base64url')).toHaveLength(32);
    const expires = new Date(t.bed.clock.now().getTime() + 24 * 3600 * 1000).toISOString();
    expect(issued.expires_at).toBe(expires);

    const row = await rowOf(node.id);
    expect(row.enroll_token_hash).toBe(sha256(issued.token));
    expect(row.enroll_token_expires_at?.toISOString()).toBe(expires);

    const audit = (await auditOf(t.bed, node.id)).filter((a) => a.action === 'node.enroll_token_issued');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: TEST_OWNER.id, entity_type: 'node' });
    expect(JSON.stringify(audit[0]?.details)).not.toContain(issued.token);
    expect(JSON.stringify(audit[0]?.details)).not.toContain(row.enroll_token_hash);
  });

  it('comes with what an agent needs for its first connection: the gateway endpoint and the CA that pins it', async () => {
    const issued = await issueEnrollToken(t.bed.ctx(), (await t.f.node()).id);
    expect(issued.grpc_endpoint).toBe('localhost:8443');
    const ca = new X509Certificate(issued.ca_cert_pem);
    expect(ca.ca).toBe(true);
    expect(issued.ca_cert_sha256).toBe(createHash('sha256').update(ca.raw).digest('hex'));
    const stored = await t.bed.deps.db.selectFrom('certificate_authority').select('cert_pem').executeTakeFirstOrThrow();
    expect(issued.ca_cert_pem).toBe(stored.cert_pem);
  });

  it('SVC_ENROLL_TOKEN_TTL_SECONDS and SVC_GRPC_PUBLIC_ENDPOINT shape the token (issue 4: TTL configurable)', async () => {
    const other = await createDomainTestbed({
      env: { SVC_ENROLL_TOKEN_TTL_SECONDS: '600', SVC_GRPC_PUBLIC_ENDPOINT: 'cp.example.com:443' },
    });
    try {
      const issued = await issueEnrollToken(other.ctx(), (await fixtures(other.ctx()).node()).id);
      expect(issued.expires_at).toBe(new Date(other.clock.now().getTime() + 600_000).toISOString());
      expect(issued.grpc_endpoint).toBe('cp.example.com:443');
    } finally {
      await other.close();
    }
  });

  it('re-issuing replaces the token: the old hash is gone, the expiry restarts, the audit says it replaced one', async () => {
    const node = await t.f.node();
    const first = await issueEnrollToken(t.bed.ctx(), node.id);
    t.bed.clock.advance(5 * 60 * 1000);
    const second = await issueEnrollToken(t.bed.ctx(), node.id);
    expect(second.token).not.toBe(first.token);
    expect(new Date(second.expires_at).getTime() - new Date(first.expires_at).getTime()).toBe(5 * 60 * 1000);
    expect((await rowOf(node.id)).enroll_token_hash).toBe(sha256(second.token));
    const byOld = await t.bed.deps.db.selectFrom('nodes').select('id').where('enroll_token_hash', '=', sha256(first.token)).execute();
    expect(byOld).toEqual([]);
    const audit = (await auditOf(t.bed, node.id)).filter((a) => a.action === 'node.enroll_token_issued');
    expect(audit.map((a) => (a.details as { replaced_previous?: boolean } | null)?.replaced_previous)).toEqual([false, true]);
  });

  it("an unknown node is not found; issuing a token does not move the node's revision", async () => {
    expect(await refusal(issueEnrollToken(t.bed.ctx(), 'nod_missing'))).toMatchObject({ type: 'not-found' });
    const node = await t.f.node();
    await issueEnrollToken(t.bed.ctx(), node.id);
    expect(await revisionsOf(t.bed, [node.id])).toEqual({ [node.id]: 1 });
  });
});
