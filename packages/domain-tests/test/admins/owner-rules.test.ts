import {
  type AdminView,
  CreateAdminInput,
  createAdmin,
  type DomainContext,
  deleteAdmin,
  getAdmin,
  parseInput,
  UpdateAdminInput,
  updateAdmin,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';
import { actorOf, anOwner } from './an-owner.ts';

// Every rule here counts owners: each test gets an installation of its own with one owner.
let bed: DomainTestbed;
let owner: AdminView;
let asOwner: DomainContext;
beforeEach(async () => {
  bed = await createDomainTestbed();
  ({ owner, asOwner } = await anOwner(bed));
});
afterEach(() => bed.close());

const update = (ctx: DomainContext, id: string, input: Record<string, unknown>) =>
  updateAdmin(ctx, id, parseInput(UpdateAdminInput, input));

describe('the installation always keeps an owner', () => {
  it('the last owner can be neither demoted nor deleted', async () => {
    const demote = await refusal(update(asOwner, owner.id, { role: 'admin' }));
    expect(demote).toMatchObject({ type: 'conflict', errors: { role: expect.any(String) } });
    expect(demote?.message).toMatch(/last owner/);
    const del = await refusal(deleteAdmin(asOwner, owner.id));
    expect(del).toMatchObject({ type: 'conflict' });
    expect(del?.message).toMatch(/last owner/);
    expect((await getAdmin(bed.deps, owner.id)).role).toBe('owner');
  });

  it('with a second owner, one owner can be demoted; then the remaining one is protected again', async () => {
    const second = await fixtures(bed.ctx()).admin({ role: 'owner' });
    expect((await update(asOwner, second.id, { role: 'admin' })).role).toBe('admin');
    expect(await refusal(update(asOwner, owner.id, { role: 'viewer' }))).toMatchObject({ type: 'conflict' });
  });
});

describe('owner powers end with the owner role, not with the token', () => {
  it('a deleted owner cannot use a still-valid token to create a new owner', async () => {
    const other = await fixtures(bed.ctx()).admin({ role: 'owner' });
    await deleteAdmin(asOwner, other.id);
    const input = parseInput(CreateAdminInput, { email: 'backdoor@example.com', password: 'backdoor-pass', role: 'owner' });
    expect(await refusal(createAdmin(bed.ctx(actorOf(other)), input))).toMatchObject({ type: 'forbidden' });
    expect(
      await bed.deps.db.selectFrom('admins').select('id').where('email', '=', 'backdoor@example.com').executeTakeFirst(),
    ).toBeUndefined();
  });

  it('a demoted owner cannot promote themselves back with the old token', async () => {
    const other = await fixtures(bed.ctx()).admin({ role: 'owner' });
    const stillOwnerOnTheToken = bed.ctx(actorOf(other));
    await update(asOwner, other.id, { role: 'viewer' });
    expect(await refusal(update(stillOwnerOnTheToken, other.id, { role: 'owner' }))).toMatchObject({ type: 'forbidden' });
    expect((await getAdmin(bed.deps, other.id)).role).toBe('viewer');
  });
});
