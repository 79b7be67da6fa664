import { randomUUID } from 'node:crypto';
import {
  CreateDnsProviderInput,
  createDnsProvider,
  deleteDnsProvider,
  getDnsProvider,
  listDnsProviders,
  parseInput,
  UpdateDnsProviderInput,
  updateDnsProvider,
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

const CF_TOKEN = `cf-${randomUUID()}`;
const AWS_SECRET = `aws/${randomUUID()}`;
const cloudflare = { kind: 'cloudflare', name: 'CF main', credentials: { api_token: CF_TOKEN } };
const route53 = {
  kind: 'route53',
  name: 'AWS',
  credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: AWS_SECRET, region: 'eu-central-1', hosted_zone_id: 'Z123ABC' },
};
const create = (input: Record<string, unknown>) => createDnsProvider(bed.ctx(), parseInput(CreateDnsProviderInput, input));
const update = (id: string, input: Record<string, unknown>) => updateDnsProvider(bed.ctx(), id, parseInput(UpdateDnsProviderInput, input));
const opened = async (id: string) =>
  JSON.parse(
    bed.deps.secrets.open(
      (await bed.deps.db.selectFrom('dns_providers').select('credentials_enc').where('id', '=', id).executeTakeFirstOrThrow())
        .credentials_enc,
    ),
  );

describe('DNS providers: credentials are write-only', () => {
  it('the view of each kind names the credentials set, never their values', async () => {
    expect((await create(cloudflare)).credentials_set).toEqual(['api_token']);
    const aws = await create(route53);
    expect(aws.credentials_set).toEqual(['access_key_id', 'hosted_zone_id', 'region', 'secret_access_key']);
    const minimal = await create({ ...route53, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'x' } });
    expect(minimal.credentials_set).toEqual(['access_key_id', 'secret_access_key']);
    expect((await create({ kind: 'digitalocean', name: 'DO', credentials: { api_token: 'dop_v1_abc' } })).kind).toBe('digitalocean');
    expect(await getDnsProvider(bed.deps, aws.id)).toEqual(aws);
  });

  it('no credential value leaves: not in create, read, list or update views, nor in the audit log', async () => {
    const created = await create(route53);
    const seen = [
      created,
      await getDnsProvider(bed.deps, created.id),
      await listDnsProviders(bed.deps, { limit: 200 }),
      await update(created.id, { name: 'renamed' }),
      await bed.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', created.id).execute(),
    ];
    for (const s of seen) {
      expect(JSON.stringify(s)).not.toContain(AWS_SECRET);
      expect(JSON.stringify(s)).not.toContain('AKIAIOSFODNN7EXAMPLE');
    }
  });

  it('stores the credentials only sealed (credentials_enc), which the installation key opens', async () => {
    const { id } = await create(cloudflare);
    const row = await bed.deps.db.selectFrom('dns_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(CF_TOKEN);
    expect(await opened(id)).toEqual({ api_token: CF_TOKEN });
  });
});

describe('DNS providers: what a new provider must be', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown kind', { ...cloudflare, kind: 'godaddy' }, 'kind'],
    ['an empty name', { ...cloudflare, name: ' ' }, 'name'],
    ['missing credentials', { kind: 'cloudflare', name: 'x' }, 'credentials'],
    ['a missing required credential', { ...cloudflare, credentials: {} }, 'credentials.api_token'],
    ['an empty credential', { ...cloudflare, credentials: { api_token: ' ' } }, 'credentials.api_token'],
    [
      'a credential of another kind',
      { ...cloudflare, credentials: { api_token: 'x', access_key_id: 'AKIA1234567890123456' } },
      'credentials.access_key_id',
    ],
    ['a non-string credential', { ...cloudflare, credentials: { api_token: 5 } }, 'credentials.api_token'],
    [
      'route53 without secret_access_key',
      { ...route53, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE' } },
      'credentials.secret_access_key',
    ],
    [
      'a malformed access key id',
      { ...route53, credentials: { ...route53.credentials, access_key_id: 'akia-lower' } },
      'credentials.access_key_id',
    ],
    ['a malformed region', { ...route53, credentials: { ...route53.credentials, region: 'Frankfurt' } }, 'credentials.region'],
    [
      'a malformed hosted zone',
      { ...route53, credentials: { ...route53.credentials, hosted_zone_id: 'zone one' } },
      'credentials.hosted_zone_id',
    ],
    ['an unknown top-level field', { ...cloudflare, enabled: true }, '(body)'],
  ];
  for (const [rule, input, field] of cases) {
    it(`refuses ${rule}, naming ${field}`, () => {
      expect(inputErrors(CreateDnsProviderInput, input)).toHaveProperty([field]);
    });
  }

  it('takes the name trimmed', () => {
    expect(parseInput(CreateDnsProviderInput, { ...cloudflare, name: '  CF  ' }).name).toBe('CF');
  });
});

describe('DNS providers: update', () => {
  it('a rename leaves the credentials as they are', async () => {
    const { id } = await create(route53);
    const renamed = await update(id, { name: 'AWS prod' });
    expect(renamed).toMatchObject({
      name: 'AWS prod',
      kind: 'route53',
      credentials_set: ['access_key_id', 'hosted_zone_id', 'region', 'secret_access_key'],
    });
    expect(await opened(id)).toEqual(route53.credentials);
  });

  it('credentials replace the whole set', async () => {
    const { id } = await create(route53);
    const fresh = { access_key_id: 'AKIAZZZZZZZZZZZZZZZZ', secret_access_key: 'new-secret' };
    const updated = await update(id, { credentials: fresh });
    expect(updated.credentials_set).toEqual(['access_key_id', 'secret_access_key']);
    expect(JSON.stringify(updated)).not.toContain('new-secret');
    expect(await opened(id)).toEqual(fresh);
  });

  it('a new set is checked against the stored kind; an incomplete or foreign set changes nothing', async () => {
    const { id } = await create(cloudflare);
    expect(await refusal(update(id, { credentials: {} }))).toMatchObject({
      type: 'validation',
      errors: { 'credentials.api_token': 'required' },
    });
    const foreign = await refusal(update(id, { credentials: { api_token: 'x', region: 'eu-west-1' } }));
    expect(foreign).toMatchObject({
      type: 'validation',
      errors: { 'credentials.region': expect.stringMatching(/not a setting of kind cloudflare/) },
    });
    expect(await opened(id)).toEqual({ api_token: CF_TOKEN });
  });

  it('the kind is fixed: an update takes only a name and credentials (a whole set, never null)', () => {
    expect(Object.keys(inputErrors(UpdateDnsProviderInput, { kind: 'digitalocean' }))).toEqual(['(body)']);
    expect(Object.keys(inputErrors(UpdateDnsProviderInput, { credentials: null }))).toEqual(['credentials']);
    expect(inputErrors(UpdateDnsProviderInput, { name: '' })).toEqual({ name: 'must be 1-100 characters' });
  });

  it('an unknown provider is not found', async () => {
    expect(await refusal(update('dns_nothere', { name: 'x' }))).toMatchObject({ type: 'not-found' });
  });
});

describe('DNS providers: delete and audit', () => {
  it('an unused provider is deleted; one a certificate uses is refused, naming the certificate, and stays', async () => {
    const free = await fixtures(bed.ctx()).dnsProvider();
    await deleteDnsProvider(bed.ctx(), free.id);
    expect(await refusal(getDnsProvider(bed.deps, free.id))).toMatchObject({ type: 'not-found' });
    expect(await refusal(deleteDnsProvider(bed.ctx(), free.id))).toMatchObject({ type: 'not-found' });

    const used = await fixtures(bed.ctx()).dnsProvider();
    const cert = await acmeCertificate(bed.deps, { dns_provider_id: used.id });
    const blocked = await refusal(deleteDnsProvider(bed.ctx(), used.id));
    expect(blocked).toMatchObject({ type: 'conflict', extra: { blocked_by: { certificates: [cert] } } });
    expect(blocked?.message).toMatch(/1 certificate\b/);
    expect((await getDnsProvider(bed.deps, used.id)).id).toBe(used.id);
  });

  it('create, update and delete are audited with the acting admin and credential names only', async () => {
    const { id } = await create(cloudflare);
    await update(id, { name: 'n', credentials: { api_token: `${CF_TOKEN}-2` } });
    await deleteDnsProvider(bed.ctx(), id);
    const rows = await bed.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['dns_provider.created', 'dns_provider.updated', 'dns_provider.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'dns_provider' });
    expect(rows[1]?.details).toMatchObject({ changed: ['name', 'credentials'], credentials_set: ['api_token'] });
    expect(JSON.stringify(rows)).not.toContain(CF_TOKEN);
  });
});
