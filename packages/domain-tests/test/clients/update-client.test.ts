import { parseInput, UpdateClientInput, updateClient } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, uniqueName } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSession, sessionOf } from '../customers-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const update = (id: string, input: Record<string, unknown>) => updateClient(bed.ctx(), id, parseInput(UpdateClientInput, input));

describe('updateClient: a merge', () => {
  it('a new email counts as verified at once (the admin vouches); absent fields stay; note and password can be removed', async () => {
    const c = await fixtures(bed.ctx()).client({ note: 'first', password: 'client-password-1' });
    bed.clock.advance(1000);
    const email = `moved-${uniqueName('c')}@example.com`;
    const moved = await update(c.id, { email: email.toUpperCase() });
    expect(moved).toMatchObject({ email, note: 'first', has_password: true, status: 'active' });
    expect(moved.email_verified_at).toBe(bed.clock.now().toISOString());
    expect((await update(c.id, { note: null })).note).toBeNull();
    expect((await update(c.id, { password: null })).has_password).toBe(false);
    expect((await update(c.id, { password: 'another-password-2' })).has_password).toBe(true);
  });

  it("a password change ends the client's sessions", async () => {
    const c = await fixtures(bed.ctx()).client();
    const sid = await clientSession(bed.ctx(), c.id);
    await update(c.id, { password: 'brand-new-password' });
    const session = await sessionOf(bed.ctx(), sid);
    expect(session.revoked_at).not.toBeNull();
    expect(session.revoked_reason).toBe('password_changed');
  });

  it("an email taken by another client is a conflict naming the email; the client's own email is no change", async () => {
    const a = await fixtures(bed.ctx()).client();
    const b = await fixtures(bed.ctx()).client();
    await expect(update(b.id, { email: a.email })).rejects.toMatchObject({ type: 'conflict', errors: { email: expect.any(String) } });
    expect((await update(b.id, { email: b.email })).email).toBe(b.email);
  });

  it('an unknown client is not found', async () => {
    await expect(update('cli_doesnotexist', { note: 'x' })).rejects.toMatchObject({ type: 'not-found' });
  });
});
