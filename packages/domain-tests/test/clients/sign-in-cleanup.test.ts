import {
  cleanUpSignIn,
  parseInput,
  RegisterInput,
  registerWithPassword,
  SYSTEM,
  UpdateClientInput,
  updateClient,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// docs/portal.md, "Client states": the hourly sign-in.cleanup removes self-registrations never
// confirmed within 24 h while they are pending or active, and keeps rejected and disabled
// records whatever their email: a rejected record holds its email until an admin deletes or
// approves it (spec 3.1 rule 3), a disabled one is a ban an admin lifts.
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PORTAL_REGISTRATION: 'open', SVC_SMTP_URL: 'smtp://127.0.0.1:1' } });
});
afterAll(() => bed.close());

const register = async (email: string) =>
  registerWithPassword(bed.deps, parseInput(RegisterInput, { email, password: 'a long password' }), { ip: '192.0.2.7' }).then(
    (r) => r.answer,
  );
const statusOf = async (id: string) =>
  (await bed.deps.db.selectFrom('clients').select('status').where('id', '=', id).executeTakeFirst())?.status ?? 'deleted';

describe('cleanUpSignIn (the worker job sign-in.cleanup)', () => {
  it('removes pending and active records never confirmed after 24 h; keeps rejected and disabled ones, and the rejected one still blocks its email', async () => {
    const make = fixtures(bed.ctx());
    const pending = await make.client({ status: 'pending', email: 'waiting@example.com' });
    const rejected = await make.client({ status: 'rejected', email: 'refused@example.com' });
    const active = await register('never-confirmed@example.com');
    const banned = await register('banned@example.com');
    await updateClient(bed.ctx(), banned.id, parseInput(UpdateClientInput, { status: 'disabled' }));
    for (const c of [pending, rejected, active, banned])
      expect(
        (await bed.deps.db.selectFrom('clients').select('email_verified_at').where('id', '=', c.id).executeTakeFirstOrThrow())
          .email_verified_at,
      ).toBeNull();

    bed.clock.advance(24 * 3600_000 + 60_000);
    const removed = await cleanUpSignIn(withActor(bed.deps, SYSTEM));

    expect(removed.registrations).toBe(2);
    expect(await statusOf(pending.id)).toBe('deleted');
    expect(await statusOf(active.id)).toBe('deleted');
    expect(await statusOf(rejected.id)).toBe('rejected');
    expect(await statusOf(banned.id)).toBe('disabled');
    await expect(register('refused@example.com')).rejects.toMatchObject({ type: 'conflict' });
    await expect(register('banned@example.com')).rejects.toMatchObject({ type: 'conflict' });
    expect((await register('never-confirmed@example.com')).status).toBe('active');
  });
});
