import { CreatePaymentProviderInput, createPaymentProvider, getPaymentProvider, listPaymentProviders, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_KEY, stripe, WEBHOOK_SECRET } from './billing-support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const create = (input: Record<string, unknown>) => createPaymentProvider(bed.ctx(), parseInput(CreatePaymentProviderInput, input));
const stored = (id: string) => bed.deps.db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('createPaymentProvider: secrets are write-only', () => {
  it('a provider is disabled by default; its view shows the public settings and only names the secrets set', async () => {
    const p = await create(stripe);
    expect(p).toEqual({
      id: expect.stringMatching(/^ppr_[0-9a-z]{26}$/),
      kind: 'stripe',
      name: 'Stripe',
      enabled: false,
      config: { publishable_key: 'pk_test_abc' },
      secrets_set: ['secret_key', 'webhook_secret'],
      webhook_url: expect.stringMatching(/\/webhooks\/payments\/ppr_[0-9a-z]{26}$/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(await getPaymentProvider(bed.ctx(), p.id)).toEqual(p);
    const listed = await listPaymentProviders(bed.ctx(), { limit: 200 });
    expect(JSON.stringify(listed)).not.toMatch(new RegExp(`${SECRET_KEY}|${WEBHOOK_SECRET}`));
  });

  it('secrets are stored only sealed (secrets_enc), which the installation key opens', async () => {
    const { id } = await create(stripe);
    const row = await stored(id);
    expect(row.config).toEqual({ publishable_key: 'pk_test_abc' });
    expect(row.secrets_enc).not.toBeNull();
    expect(row.secrets_enc).not.toContain(SECRET_KEY);
    expect(row.secrets_enc).not.toContain(WEBHOOK_SECRET);
    expect(JSON.parse(bed.deps.secrets.open(row.secrets_enc as string))).toEqual({
      secret_key: SECRET_KEY,
      webhook_secret: WEBHOOK_SECRET,
    });
  });

  it('a manual provider (public instructions, no secrets) may be enabled at once', async () => {
    const p = await create({ kind: 'manual', name: 'Bank transfer', enabled: true, config: { instructions: 'IBAN DE00 …' } });
    expect(p).toMatchObject({ enabled: true, config: { instructions: 'IBAN DE00 …' }, secrets_set: [] });
    expect((await stored(p.id)).secrets_enc).toBeNull();
  });

  it('a provider may be created without its secrets while disabled; enabled it needs every required one (conflict naming the missing)', async () => {
    expect(await create({ kind: 'stripe', name: 'later' })).toMatchObject({ enabled: false, config: {}, secrets_set: [] });
    await expect(create({ kind: 'stripe', name: 'x', enabled: true, config: { secret_key: SECRET_KEY } })).rejects.toMatchObject({
      type: 'conflict',
      message: expect.stringContaining('webhook_secret'),
      errors: { 'config.webhook_secret': expect.any(String) },
      extra: { missing_secrets: ['webhook_secret'] },
    });
  });

  it("each setting follows its kind's declaration: known names, prefixes, no whitespace in secrets, required public settings, no null", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['a secret_key without sk_', { ...stripe, config: { secret_key: 'pk_live_x' } }, 'config.secret_key'],
      ['a webhook_secret without whsec_', { ...stripe, config: { webhook_secret: 'abc' } }, 'config.webhook_secret'],
      ['a secret with whitespace', { ...stripe, config: { secret_key: 'sk_live x' } }, 'config.secret_key'],
      ['a publishable_key without pk_', { ...stripe, config: { publishable_key: 'sk_live_x' } }, 'config.publishable_key'],
      ['a setting the kind does not have', { ...stripe, config: { api_key: 'x' } }, 'config.api_key'],
      ['null on create', { ...stripe, config: { secret_key: null } }, 'config.secret_key'],
      ['manual without instructions', { kind: 'manual', name: 'm', config: {} }, 'config.instructions'],
      [
        'manual with a stripe setting',
        { kind: 'manual', name: 'm', config: { instructions: 'x', secret_key: 'sk_x' } },
        'config.secret_key',
      ],
    ];
    for (const [rule, input, field] of cases) {
      await expect(create(input), rule).rejects.toMatchObject({ type: 'validation', errors: { [field]: expect.any(String) } });
    }
  });
});
