import { CreateCertificateInput, createCertificate, getCertificate, parseInput } from '@svc/domain';
import { caSignedCertificate, selfSignedCertificate } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { fileTestbed, inputErrors, refusal } from '../support.ts';

const t = fileTestbed();
/** Two certificates with their keys, as an operator would upload them. */
const [A, B] = [
  selfSignedCertificate({ dnsNames: ['example.com', 'www.example.com'] }),
  selfSignedCertificate({ cn: 'other.example.org' }),
];

const upload = (input: Record<string, unknown>) =>
  createCertificate(t.bed.ctx(), parseInput(CreateCertificateInput, { kind: 'uploaded', ...input }));

describe('createCertificate', () => {
  it('takes validity, issuer and domains (subjectAltName DNS entries) from the PEM; the key is sealed and never in the view', async () => {
    const c = await upload({ name: ' edge ', ...A });
    expect(c).toMatchObject({
      name: 'edge',
      kind: 'uploaded',
      status: 'active',
      domains: ['example.com', 'www.example.com'],
      has_key: true,
    });
    expect(c.id).toMatch(/^crt_/);
    expect(c.issuer).toContain('CN=example.com');
    expect(c.cert_pem).toContain('-----BEGIN CERTIFICATE-----');
    const days = (Date.parse(c.not_after as string) - Date.parse(c.not_before as string)) / 86_400_000;
    expect(Math.round(days)).toBe(30);
    expect(c.not_after).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(c)).not.toContain('PRIVATE KEY');
    const row = await t.bed.deps.db.selectFrom('certificates').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.key_pem_enc).not.toContain('PRIVATE KEY');
    expect(t.bed.deps.secrets.open(row.key_pem_enc as string)).toContain('PRIVATE KEY');
    expect(await getCertificate(t.bed.ctx(), c.id)).toEqual(c);
    expect((await upload({ name: '  ', ...A })).name).toBeNull();
  });

  it('the first certificate of a chain is the leaf: its key is the one that must match', async () => {
    const chain = caSignedCertificate('chain.example.com');
    const c = await upload({ cert_pem: chain.cert_pem, key_pem: chain.key_pem });
    expect(c.domains).toEqual(['chain.example.com']);
    expect(c.cert_pem?.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    const wrong = await refusal(upload({ cert_pem: chain.cert_pem, key_pem: chain.ca_key_pem }));
    expect(wrong.errors?.key_pem).toMatch(/does not match/);
  });

  it('domains given must be covered by the certificate (compared in lower case)', async () => {
    expect((await upload({ ...A, domains: ['WWW.example.com'] })).domains).toEqual(['www.example.com']);
    const bad = await refusal(upload({ ...A, domains: ['example.com', 'evil.example.net'] }));
    expect(bad.errors?.['domains.1']).toMatch(/does not cover/);
  });

  it('refused per field: a key of another certificate, an unparsable certificate or key, missing material, other fields, another kind', async () => {
    const mismatch = await refusal(upload({ cert_pem: A.cert_pem, key_pem: B.key_pem }));
    expect(mismatch).toMatchObject({ type: 'validation', errors: { key_pem: 'does not match the certificate' } });
    expect((await refusal(upload({ cert_pem: 'not a certificate', key_pem: A.key_pem }))).errors).toHaveProperty('cert_pem');
    const broken = await refusal(
      upload({ cert_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', key_pem: A.key_pem }),
    );
    expect(broken.errors?.cert_pem).toMatch(/does not parse/);
    expect((await refusal(upload({ cert_pem: A.cert_pem, key_pem: 'nope' }))).errors).toHaveProperty('key_pem');
    expect(inputErrors(CreateCertificateInput, { kind: 'uploaded', cert_pem: A.cert_pem }).key_pem).toMatch(/required/);
    expect(inputErrors(CreateCertificateInput, { kind: 'uploaded', ...A, key: 'x' })).not.toEqual({});
    expect(inputErrors(CreateCertificateInput, { kind: 'selfsigned', ...A })).toHaveProperty('kind');
  });

  it('kind acme needs an ACME account, a DNS provider and names it can validate; refused per field, writing nothing', async () => {
    const acme = { kind: 'acme', acme_account_id: 'acm_x', dns_provider_id: 'dns_x' };
    expect(inputErrors(CreateCertificateInput, { kind: 'acme', domains: ['example.com'] })).toMatchObject({
      acme_account_id: 'required for kind acme',
      dns_provider_id: 'required for kind acme',
    });
    expect(inputErrors(CreateCertificateInput, { ...acme }).domains).toMatch(/required/);
    expect(inputErrors(CreateCertificateInput, { ...acme, domains: [] })).toHaveProperty('domains');
    for (const bad of ['a.*.example.com', 'example', '-x.example.com', '1.2.3.4', 'ex ample.com', `${'a'.repeat(64)}.com`])
      expect(inputErrors(CreateCertificateInput, { ...acme, domains: [bad] }), bad).toHaveProperty('domains.0');
    expect(inputErrors(CreateCertificateInput, { ...acme, domains: ['example.com'], cert_pem: A.cert_pem }).cert_pem).toBe(
      'not for kind acme',
    );
    expect(inputErrors(CreateCertificateInput, { kind: 'uploaded', ...A, acme_account_id: 'acm_x' }).acme_account_id).toBe(
      'not for kind uploaded',
    );
    // Names are lower-cased, a trailing dot dropped, duplicates removed.
    expect(parseInput(CreateCertificateInput, { ...acme, domains: ['*.Example.COM.', '*.example.com', 'example.com'] }).domains).toEqual([
      '*.example.com',
      'example.com',
    ]);
    const before = await t.bed.deps.db.selectFrom('certificates').select('id').execute();
    const err = await refusal(createCertificate(t.bed.ctx(), parseInput(CreateCertificateInput, { ...acme, domains: ['example.com'] })));
    expect(err).toMatchObject({
      type: 'validation',
      errors: { acme_account_id: 'no such ACME account', dns_provider_id: 'no such DNS provider' },
    });
    expect(await t.bed.deps.db.selectFrom('certificates').select('id').execute()).toHaveLength(before.length);
  });
});
