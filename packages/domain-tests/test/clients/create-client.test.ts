import { CreateClientInput, createClient, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, uniqueName } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const create = (input: Record<string, unknown>) => createClient(bed.ctx(), parseInput(CreateClientInput, input));

describe('createClient: an admin creates an active client and vouches for the email (spec 3.1)', () => {
  it('the client is active, its email lower-cased and verified now, its password kept only as an Argon2id hash', async () => {
    const email = `New-${uniqueName('c')}@Example.COM`;
    const c = await create({ email, password: 'client-password-1', note: 'vip' });
    expect(c).toMatchObject({ email: email.toLowerCase(), status: 'active', has_password: true, note: 'vip' });
    expect(c.id).toMatch(/^cli_[0-9a-z]{26}$/);
    expect(c.email_verified_at).toBe(bed.clock.now().toISOString());
    const row = await bed.deps.db.selectFrom('clients').select('password_hash').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(c)).not.toMatch(/argon2/);
  });

  it('a client without password has no password sign-in and no note', async () => {
    expect(await fixtures(bed.ctx()).client()).toMatchObject({ has_password: false, note: null, status: 'active' });
  });

  it('an email already taken, in any case, is a conflict naming the email', async () => {
    const c = await fixtures(bed.ctx()).client();
    await expect(create({ email: c.email.toUpperCase() })).rejects.toMatchObject({
      type: 'conflict',
      errors: { email: expect.any(String) },
    });
  });

  it('the input rules: an email address, the password policy (8 to 1024 characters), a note of at most 2000, nothing else', () => {
    const refused = (input: Record<string, unknown>) => {
      try {
        parseInput(CreateClientInput, input);
      } catch (err) {
        return (err as { errors: Record<string, string> }).errors;
      }
      throw new Error(`accepted ${JSON.stringify(input)}`);
    };
    expect(Object.keys(refused({ email: 'not-an-email' }))).toEqual(['email']);
    expect(Object.keys(refused({}))).toEqual(['email']);
    expect(refused({ email: 'p@example.com', password: 'short' })).toEqual({ password: 'must be at least 8 characters' });
    expect(refused({ email: 'p@example.com', password: 'x'.repeat(1025) })).toEqual({ password: 'must be at most 1024 characters' });
    expect(Object.keys(refused({ email: 'p@example.com', note: 'n'.repeat(2001) }))).toEqual(['note']);
    expect(Object.keys(refused({ email: 'p@example.com', status: 'pending' }))).toEqual(['(body)']);
    expect(parseInput(CreateClientInput, { email: '  Mixed@Example.com ' }).email).toBe('mixed@example.com');
  });
});
