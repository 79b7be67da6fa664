import {
  CreateAcmeAccountInput,
  createAcmeAccount,
  deleteAcmeAccount,
  getAcmeAccount,
  LETS_ENCRYPT_PRODUCTION,
  parseInput,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputErrors, refusal } from '../support.ts';
import { acmeCertificate } from './acme-certificate.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory';
const create = (input: Record<string, unknown>) => createAcmeAccount(bed.ctx(), parseInput(CreateAcmeAccountInput, input));

describe('ACME accounts: what an account is', () => {
  it("an account is at Let's Encrypt production unless told otherwise, its email lower-cased, not yet registered", async () => {
    const created = await create({ email: 'Certs@Example.com' });
    expect(created).toEqual({
      id: expect.stringMatching(/^acm_[0-9a-z]{26}$/),
      email: 'certs@example.com',
      directory_url: LETS_ENCRYPT_PRODUCTION,
      registered: false,
      registered_at: null,
      registration_error: null,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(await getAcmeAccount(bed.ctx(), created.id)).toEqual(created);
    expect((await create({ email: 'certs@example.com', directory_url: STAGING })).directory_url).toBe(STAGING);
  });

  it('shows registered once the account has an account URL (set by the ACME issue), never the URL or the key', async () => {
    const { id } = await fixtures(bed.ctx()).acmeAccount();
    await bed.deps.db
      .updateTable('acme_accounts')
      .set({ account_url: 'https://acme.example/acct/1', account_key_enc: bed.deps.secrets.seal('PRIVATE-KEY-PEM') })
      .where('id', '=', id)
      .execute();
    const view = await getAcmeAccount(bed.ctx(), id);
    expect(view.registered).toBe(true);
    expect(JSON.stringify(view)).not.toContain('acct/1');
    expect(view).not.toHaveProperty('account_key_enc');
  });

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a missing email', {}, 'email'],
    ['a malformed email', { email: 'not-an-email' }, 'email'],
    ['an http directory', { email: 'a@example.com', directory_url: 'http://acme.example/directory' }, 'directory_url'],
    ['a directory that is not a URL', { email: 'a@example.com', directory_url: 'letsencrypt' }, 'directory_url'],
    ['a directory with credentials', { email: 'a@example.com', directory_url: 'https://u:p@acme.example/dir' }, 'directory_url'],
    ['a directory with a fragment', { email: 'a@example.com', directory_url: 'https://acme.example/dir#x' }, 'directory_url'],
    ['an unknown field', { email: 'a@example.com', eab_kid: 'x' }, '(body)'],
  ];
  for (const [rule, input, field] of cases) {
    it(`refuses ${rule}, naming ${field}`, () => {
      expect(inputErrors(CreateAcmeAccountInput, input)).toHaveProperty([field]);
    });
  }

  it('a second account for the same email and directory is a conflict, whatever the case; another directory is fine', async () => {
    await create({ email: 'dup@example.com' });
    const again = await refusal(create({ email: 'DUP@example.com', directory_url: LETS_ENCRYPT_PRODUCTION }));
    expect(again).toMatchObject({ type: 'conflict', errors: { email: expect.any(String) } });
    expect((await create({ email: 'dup@example.com', directory_url: STAGING })).email).toBe('dup@example.com');
  });
});

describe('ACME accounts: delete and audit', () => {
  it('an unused account is deleted; one certificates are issued through is refused, naming them, and stays', async () => {
    const free = await fixtures(bed.ctx()).acmeAccount();
    await deleteAcmeAccount(bed.ctx(), free.id);
    expect(await refusal(getAcmeAccount(bed.ctx(), free.id))).toMatchObject({ type: 'not-found' });
    expect(await refusal(deleteAcmeAccount(bed.ctx(), free.id))).toMatchObject({ type: 'not-found' });

    const used = await fixtures(bed.ctx()).acmeAccount();
    const certs = [
      await acmeCertificate(bed.deps, { acme_account_id: used.id }),
      await acmeCertificate(bed.deps, { acme_account_id: used.id }),
    ];
    const blocked = await refusal(deleteAcmeAccount(bed.ctx(), used.id));
    expect(blocked).toMatchObject({ type: 'conflict', extra: { blocked_by: { certificates: certs.sort() } } });
    expect(blocked?.message).toMatch(/2 certificates/);
    expect((await getAcmeAccount(bed.ctx(), used.id)).id).toBe(used.id);
  });

  it('create and delete are audited with the acting admin, the email and the directory', async () => {
    const { id } = await create({ email: 'audit@example.com' });
    await deleteAcmeAccount(bed.ctx(), id);
    const rows = await bed.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['acme_account.created', 'acme_account.deleted']);
    for (const r of rows) {
      expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'acme_account' });
      expect(r.details).toMatchObject({ email: 'audit@example.com', directory_url: LETS_ENCRYPT_PRODUCTION });
    }
  });
});
