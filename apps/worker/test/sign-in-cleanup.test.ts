import { cleanUpSignIn, RegisterInput, registerWithPassword, SYSTEM, withActor } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, type Fixtures, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../src/worker.ts';

// Spec 3.1 rule 2 / spec 8: "Unconfirmed records are deleted by a background job after 24 hours."
let bed: DomainTestbed;
let make: Fixtures;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PORTAL_REGISTRATION: 'open', SVC_SMTP_URL: 'smtp://127.0.0.1:1' } });
  make = fixtures(bed.ctx());
});
afterAll(() => bed.close());

const register = async (email: string) =>
  registerWithPassword(bed.deps, RegisterInput.parse({ email, password: 'a long password' }), { ip: '192.0.2.1' }).then((r) => r.answer);
const exists = async (id: string) =>
  (await bed.deps.db.selectFrom('clients').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

describe('sign-in cleanup (worker job sign-in.cleanup)', () => {
  it('deletes self-registrations still unconfirmed after 24 h, not before; keeps admin-made clients and anyone with a subscription', async () => {
    const stale = await register('stale@example.com');
    const withSub = await register('paid@example.com');
    await make.subscription({ client_id: withSub.id });
    const adminMade = await make.client();

    bed.clock.advance(23 * 3600_000);
    expect((await cleanUpSignIn(withActor(bed.deps, SYSTEM))).registrations).toBe(0);
    expect(await exists(stale.id)).toBe(true);
    const fresh = await register('fresh@example.com');

    bed.clock.advance(3600_000 + 60_000);
    const worker = createWorker(bed.runtime, { cleanupEveryMs: 50 });
    await worker.start();
    try {
      for (let i = 0; i < 250 && (await exists(stale.id)); i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await worker.stop();
    }
    expect(await exists(stale.id)).toBe(false);
    expect(await exists(withSub.id)).toBe(true);
    expect(await exists(adminMade.id)).toBe(true);
    expect(await exists(fresh.id)).toBe(true);
    const audit = await bed.deps.db
      .selectFrom('audit_log')
      .select(['actor_type', 'entity_id'])
      .where('action', '=', 'client.unconfirmed_deleted')
      .execute();
    expect(audit).toEqual([{ actor_type: 'system', entity_id: stale.id }]);
    // Its magic link went with it (cascade); the email can register again.
    expect(await bed.deps.db.selectFrom('magic_link_tokens').select('client_id').where('client_id', '=', stale.id).execute()).toEqual([]);
    expect((await register('stale@example.com')).status).toBe('active');
  });
});
