import { randomUUID } from 'node:crypto';
import {
  CreatePaymentProviderInput,
  createPaymentProvider,
  parseInput,
  UpdatePaymentProviderInput,
  updatePaymentProvider,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_KEY, stripe, WEBHOOK_SECRET } from './billing-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const create = (input: Record<string, unknown>) => createPaymentProvider(bed.ctx(), parseInput(CreatePaymentProviderInput, input));
const update = (id: string, input: Record<string, unknown>) =>
  updatePaymentProvider(bed.ctx(), id, parseInput(UpdatePaymentProviderInput, input));
const secretsOf = async (id: string) => {
  const row = await bed.deps.db
    .selectFrom('payment_providers')
    .select(['secrets_enc', 'enabled'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { enabled: row.enabled, secrets: row.secrets_enc === null ? null : JSON.parse(bed.deps.secrets.open(row.secrets_enc)) };
};

describe('updatePaymentProvider: a merge, settings field by field', () => {
  it('sets and replaces single settings; the others are untouched; a new secret is sealed, never shown', async () => {
    const { id } = await create(stripe);
    const newKey = `sk_live_${randomUUID()}`;
    const res = await update(id, { config: { secret_key: newKey, publishable_key: 'pk_live_new' } });
    expect(res).toMatchObject({ name: 'Stripe', enabled: false, config: { publishable_key: 'pk_live_new' } });
    expect(res.secrets_set).toEqual(['secret_key', 'webhook_secret']);
    expect(JSON.stringify(res)).not.toContain(newKey);
    expect((await secretsOf(id)).secrets).toEqual({ secret_key: newKey, webhook_secret: WEBHOOK_SECRET });
  });

  it('null removes a secret or an optional public setting; with no secret left nothing is sealed', async () => {
    const { id } = await create(stripe);
    expect(await update(id, { config: { webhook_secret: null, publishable_key: null } })).toMatchObject({
      config: {},
      secrets_set: ['secret_key'],
    });
    expect((await secretsOf(id)).secrets).toEqual({ secret_key: SECRET_KEY });
    expect((await update(id, { config: { secret_key: null } })).secrets_set).toEqual([]);
    expect((await secretsOf(id)).secrets).toBeNull();
  });

  it('a required public setting can be changed but not removed', async () => {
    const { id } = await create({ kind: 'manual', name: 'm', config: { instructions: 'old' } });
    expect((await update(id, { config: { instructions: 'new' } })).config).toEqual({ instructions: 'new' });
    await expect(update(id, { config: { instructions: null } })).rejects.toMatchObject({
      type: 'validation',
      errors: { 'config.instructions': expect.any(String) },
    });
  });

  it('enabling needs every required secret: a conflict naming the missing ones, then allowed once they are set', async () => {
    const { id } = await create({ kind: 'stripe', name: 'x' });
    await expect(update(id, { enabled: true })).rejects.toMatchObject({
      type: 'conflict',
      message: expect.stringMatching(/secret_key, webhook_secret/),
      extra: { missing_secrets: ['secret_key', 'webhook_secret'] },
    });
    expect((await secretsOf(id)).enabled).toBe(false);
    expect((await update(id, { enabled: true, config: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET } })).enabled).toBe(true);
  });

  it('removing a required secret of an enabled provider is a conflict; disabling it in the same change is allowed', async () => {
    const { id } = await create({ ...stripe, enabled: true });
    await expect(update(id, { config: { secret_key: null } })).rejects.toMatchObject({
      type: 'conflict',
      extra: { missing_secrets: ['secret_key'] },
    });
    expect((await update(id, { enabled: false, config: { secret_key: null } })).enabled).toBe(false);
  });

  it("refuses settings against the kind's declaration and changes nothing; an unknown provider is not found", async () => {
    const { id } = await create(stripe);
    for (const [config, field] of [
      [{ secret_key: 'nope' }, 'config.secret_key'],
      [{ instructions: 'x' }, 'config.instructions'],
    ] as const) {
      await expect(update(id, { config })).rejects.toMatchObject({ type: 'validation', errors: { [field]: expect.any(String) } });
    }
    expect((await secretsOf(id)).secrets.secret_key).toBe(SECRET_KEY);
    await expect(update('ppr_nothere', { name: 'x' })).rejects.toMatchObject({ type: 'not-found' });
  });
});
