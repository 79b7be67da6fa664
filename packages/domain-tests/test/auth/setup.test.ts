import { createHash } from 'node:crypto';
import { beginBootstrap, completeSetup, type DomainDeps, parseInput, SetupInput, setupRequired } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Setup happens once per installation: each test starts from one without any admin.
let bed: DomainTestbed;
let deps: DomainDeps;
beforeEach(async () => {
  bed = await createDomainTestbed();
  deps = bed.deps;
});
afterEach(() => bed.close());

const owner = { email: 'Owner@Example.com', password: 'owner-password-1' };
const setup = (token: string | null, who: { email: string; password: string } = owner) =>
  completeSetup(deps, parseInput(SetupInput, { token: token ?? 'no-token', ...who }), { ip: '192.0.2.10' });
const admins = () => deps.db.selectFrom('admins').select(['email', 'role']).execute();
const auditOf = (action: string) => deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).execute();

describe('bootstrap (spec 3.4, 5.5): the first owner from a one-time setup token', () => {
  it('only the SHA-256 of the setup token is stored', async () => {
    const token = await beginBootstrap(deps);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await deps.db.selectFrom('setup_tokens').select('token_hash').execute();
    expect(rows.map((r) => r.token_hash)).toEqual([
      createHash('sha256')
        .update(token as string)
        .digest('hex'),
    ]);
  });

  it("the token creates the owner, audited as the system from the operator's address; afterwards setup is gone, whatever is sent", async () => {
    const token = await beginBootstrap(deps);
    const created = await setup(token);
    expect(created).toMatchObject({ email: 'owner@example.com', role: 'owner', has_password: true });
    expect(await auditOf('setup.completed')).toEqual([
      expect.objectContaining({ actor_type: 'system', actor_id: null, ip: '192.0.2.10', entity_type: 'admin', entity_id: created.id }),
    ]);
    expect(await setupRequired(deps)).toBe(false);
    expect(await refusal(setup(token, { email: 'x@example.com', password: 'another-pass-1' }))).toMatchObject({ type: 'not-found' });
    expect(await admins()).toEqual([{ email: 'owner@example.com', role: 'owner' }]);
  });

  it('the setup token is single use: concurrent setups create exactly one owner', async () => {
    const token = await beginBootstrap(deps);
    const results = await Promise.allSettled(
      [1, 2, 3].map((i) => setup(token, { email: `o${i}@example.com`, password: 'owner-password-1' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ type: 'not-found' });
    expect(await admins()).toHaveLength(1);
  });

  it('a wrong setup token is refused, audited, and changes nothing; the right one still works', async () => {
    const token = await beginBootstrap(deps);
    expect(await refusal(setup('not-the-token'))).toMatchObject({ type: 'unauthenticated' });
    expect(await admins()).toEqual([]);
    expect(await auditOf('setup.token_rejected')).toEqual([expect.objectContaining({ actor_type: 'anonymous', ip: '192.0.2.10' })]);
    expect((await setup(token)).role).toBe('owner');
  });

  it('each start with no admin replaces the token: the previous one is refused', async () => {
    const first = await beginBootstrap(deps);
    const second = await beginBootstrap(deps);
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    expect(await refusal(setup(first))).toMatchObject({ type: 'unauthenticated' });
    expect((await setup(second)).role).toBe('owner');
  });

  it('a start once an admin exists issues no token and leaves none behind', async () => {
    await setup(await beginBootstrap(deps));
    expect(await beginBootstrap(deps)).toBeNull();
    expect(await deps.db.selectFrom('setup_tokens').select('token_hash').execute()).toEqual([]);
  });
});
