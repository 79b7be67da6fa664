import {
  CreateAcmeAccountInput,
  createAcmeAccount,
  getAcmeAccount,
  getCertificate,
  listAcmeAccounts,
  listAuditLog,
  listCertificates,
  mayReadLinks,
  mayReadOutboundAnswers,
  OUTBOUND_ANSWER_HIDDEN,
  parseInput,
  SYSTEM,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 29.2: what a CA or a DNS provider said (or whatever answered at a URL an admin named: an
// internal service's error page) is read by owners and admins only, like webhook excerpts.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const admin = (role: 'owner' | 'admin' | 'viewer') => ({ type: 'admin' as const, id: 'adm_00000000000000000000000001', role });
const WORDS = 'the ACME directory https://10.0.0.7/dir answered HTTP 500: <h1>intranet wiki</h1>';

async function failedAccountAndCertificate() {
  const account = await createAcmeAccount(
    bed.ctx(admin('owner')),
    parseInput(CreateAcmeAccountInput, { email: 'x@example.com', directory_url: 'https://10.0.0.7/dir' }),
  );
  await bed.deps.db.updateTable('acme_accounts').set({ registration_error: WORDS }).where('id', '=', account.id).execute();
  const cert = 'crt_00000000000000000000000001';
  const now = new Date();
  await bed.deps.db
    .insertInto('certificates')
    .values({
      id: cert,
      name: 'edge',
      kind: 'acme',
      status: 'failed',
      domains: JSON.stringify(['edge.example.com']),
      acme_account_id: account.id,
      last_error: WORDS,
      failed_attempts: 1,
      created_at: now,
      updated_at: now,
    } as never)
    .execute();
  await bed.deps.db
    .insertInto('audit_log')
    .values({
      id: 'aud_00000000000000000000000001',
      at: now,
      actor_type: 'system',
      action: 'certificate.issue_failed',
      entity_type: 'certificate',
      entity_id: cert,
      details: JSON.stringify({ error: WORDS, failed_attempts: 1 }),
    } as never)
    .execute();
  return { account: account.id, cert };
}

describe('who reads why an ACME or DNS step failed', () => {
  it('the people who read webhook excerpts and subscription links: owners, admins, the shell; not viewers', () => {
    for (const actor of [admin('owner'), admin('admin'), admin('viewer'), SYSTEM])
      expect(mayReadOutboundAnswers(actor), JSON.stringify(actor)).toBe(mayReadLinks(actor));
  });

  it('a viewer reads that the registration, the issuance and the audited attempt failed, not the words; owners and admins read them', async () => {
    const { account, cert } = await failedAccountAndCertificate();
    for (const role of ['owner', 'admin', 'viewer'] as const) {
      const ctx = bed.ctx(admin(role));
      const want = role === 'viewer' ? OUTBOUND_ANSWER_HIDDEN : WORDS;
      expect((await getAcmeAccount(ctx, account)).registration_error, role).toBe(want);
      expect((await listAcmeAccounts(ctx, { limit: 50 })).items.find((a) => a.id === account)?.registration_error, role).toBe(want);
      expect((await getCertificate(ctx, cert)).last_error, role).toBe(want);
      expect((await listCertificates(ctx, { limit: 50 })).items.find((c) => c.id === cert)?.last_error, role).toBe(want);
      const [entry] = (await listAuditLog(ctx, { limit: 5, entity_id: cert })).items;
      expect(entry?.details, role).toEqual({ error: want, failed_attempts: 1 });
    }
  });
});
