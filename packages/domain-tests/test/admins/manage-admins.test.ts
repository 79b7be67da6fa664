import {
  type AdminView,
  CreateAdminInput,
  createAdmin,
  type DomainContext,
  deleteAdmin,
  getAdmin,
  getCurrentAdmin,
  loginAdminWithPassword,
  PasswordLoginInput,
  parseInput,
  RefreshInput,
  ResetAdminPasswordInput,
  refreshSession,
  resetAdminPassword,
  UpdateAdminInput,
  updateAdmin,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';
import { anOwner } from './an-owner.ts';

let bed: DomainTestbed;
let owner: AdminView;
let asOwner: DomainContext;
beforeAll(async () => {
  bed = await createDomainTestbed();
  ({ owner, asOwner } = await anOwner(bed));
});
afterAll(() => bed.close());

const create = (input: Record<string, unknown>) => createAdmin(asOwner, parseInput(CreateAdminInput, input));
const update = (id: string, input: Record<string, unknown>) => updateAdmin(asOwner, id, parseInput(UpdateAdminInput, input));
const signIn = (email: string, password: string) =>
  loginAdminWithPassword(bed.deps, parseInput(PasswordLoginInput, { email, password }), {});
const refresh = (token: string) => refreshSession(bed.deps, 'admin', parseInput(RefreshInput, { refresh_token: token }), {});
const auditOf = (id: string) =>
  bed.deps.db
    .selectFrom('audit_log')
    .select(['action', 'actor_type', 'actor_id', 'details'])
    .where('entity_id', '=', id)
    .orderBy('id')
    .execute();

describe('managing admins', () => {
  it('a new admin is stored with the email lower-cased, and its creation audited with the acting owner', async () => {
    const created = await create({ email: 'Ops@Example.com', password: 'ops-password-1', role: 'admin' });
    expect(created).toMatchObject({ email: 'ops@example.com', role: 'admin', has_password: true });
    expect(created.id).toMatch(/^adm_/);
    expect(await auditOf(created.id)).toEqual([
      { action: 'admin.created', actor_type: 'admin', actor_id: owner.id, details: { email: 'ops@example.com', role: 'admin' } },
    ]);
  });

  it('an admin created without a password signs in only through OAuth', async () => {
    const created = await create({ email: 'oauth-only@example.com', role: 'viewer' });
    expect(created.has_password).toBe(false);
    expect(await refusal(signIn('oauth-only@example.com', 'any-password'))).toMatchObject({ type: 'unauthenticated' });
  });

  it('an update is a merge (absent fields stay); update and delete are audited', async () => {
    const { id } = await create({ email: 'merge@example.com', password: 'merge-password-1', role: 'admin' });
    expect(await update(id, { role: 'viewer' })).toMatchObject({ email: 'merge@example.com', role: 'viewer', has_password: true });
    await deleteAdmin(asOwner, id);
    expect(await refusal(getAdmin(bed.deps, id))).toMatchObject({ type: 'not-found' });
    const audit = await auditOf(id);
    expect(audit.map((r) => r.action)).toEqual(['admin.created', 'admin.updated', 'admin.deleted']);
    expect(audit[1]?.details).toEqual({ changed: ['role'], role: { from: 'admin', to: 'viewer' } });
  });

  it('an email already taken, in any case, is a conflict naming email and creates nothing', async () => {
    const before = await bed.deps.db.selectFrom('admins').select('id').execute();
    const taken = await refusal(create({ email: owner.email.toUpperCase(), role: 'admin' }));
    expect(taken).toMatchObject({ type: 'conflict', errors: { email: 'already taken' } });
    expect(await bed.deps.db.selectFrom('admins').select('id').execute()).toHaveLength(before.length);
    const other = await fixtures(bed.ctx()).admin();
    expect(await refusal(update(other.id, { email: owner.email }))).toMatchObject({ type: 'conflict', errors: { email: 'already taken' } });
  });

  it("changing or removing an admin's password ends that admin's sessions", async () => {
    for (const password of ['brand-new-password', null]) {
      const other = await fixtures(bed.ctx()).admin();
      const pair = await signIn(other.email, 'admin-password-1');
      expect((await update(other.id, { password })).has_password).toBe(password !== null);
      expect(await refusal(refresh(pair.refresh_token))).toMatchObject({ type: 'unauthenticated' });
      const sessions = await bed.deps.db.selectFrom('sessions').select('revoked_reason').where('subject_id', '=', other.id).execute();
      expect(sessions).toEqual([{ revoked_reason: 'password_changed' }]);
    }
  });

  it('a deleted admin is signed out: the refresh token fails and a token naming them authenticates no one', async () => {
    const gone = await fixtures(bed.ctx()).admin({ role: 'viewer' });
    const pair = await signIn(gone.email, 'admin-password-1');
    await deleteAdmin(asOwner, gone.id);
    expect(await refusal(getCurrentAdmin(bed.deps, gone.id))).toMatchObject({ type: 'unauthenticated' });
    expect(await refusal(refresh(pair.refresh_token))).toMatchObject({ type: 'unauthenticated' });
  });
});

describe('resetting a password from the shell (svc admin reset-password)', () => {
  it('sets the new password, ends every session of the admin and is audited', async () => {
    const admin = await fixtures(bed.ctx()).admin();
    const pair = await signIn(admin.email, 'admin-password-1');
    await resetAdminPassword(
      bed.system(),
      parseInput(ResetAdminPasswordInput, { email: admin.email.toUpperCase(), password: 'reset-password-2' }),
    );
    expect(await refusal(refresh(pair.refresh_token))).toMatchObject({ type: 'unauthenticated' });
    expect(await refusal(signIn(admin.email, 'admin-password-1'))).toMatchObject({ type: 'unauthenticated' });
    expect((await signIn(admin.email, 'reset-password-2')).token_type).toBe('Bearer');
    expect(await auditOf(admin.id)).toContainEqual(expect.objectContaining({ action: 'admin.password_reset', actor_type: 'system' }));
  });

  it('an unknown email is not found and changes nothing', async () => {
    const input = parseInput(ResetAdminPasswordInput, { email: 'nobody@example.com', password: 'reset-password-2' });
    expect(await refusal(resetAdminPassword(bed.system(), input))).toMatchObject({ type: 'not-found' });
  });
});
