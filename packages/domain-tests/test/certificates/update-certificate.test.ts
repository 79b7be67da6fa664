import { parseInput, UpdateCertificateInput, updateCertificate } from '@svc/domain';
import { selfSignedCertificate } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { fileTestbed, inputErrors, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();
/** Two certificates with their keys, as an operator would upload them. */
const [A, B] = [
  selfSignedCertificate({ dnsNames: ['example.com', 'www.example.com'] }),
  selfSignedCertificate({ cn: 'other.example.org' }),
];

const update = (id: string, input: Record<string, unknown>) =>
  updateCertificate(t.bed.ctx(), id, parseInput(UpdateCertificateInput, input));

describe('updateCertificate', () => {
  it('merges: a name alone changes only the name', async () => {
    const c = await t.f.certificate({ name: 'old', ...A });
    expect(await update(c.id, { name: 'new' })).toMatchObject({
      name: 'new',
      domains: c.domains,
      cert_pem: c.cert_pem,
      not_after: c.not_after,
    });
  });

  it('cert_pem and key_pem come together (the missing half is named), and must belong together', async () => {
    expect(inputErrors(UpdateCertificateInput, { cert_pem: B.cert_pem })).toHaveProperty('key_pem');
    expect(inputErrors(UpdateCertificateInput, { key_pem: B.key_pem })).toHaveProperty('cert_pem');
    expect(inputErrors(UpdateCertificateInput, { kind: 'acme' })).not.toEqual({});
    const c = await t.f.certificate(A);
    expect((await refusal(update(c.id, { cert_pem: B.cert_pem, key_pem: A.key_pem }))).errors).toHaveProperty('key_pem');
    expect(await refusal(update('crt_nope', { name: 'x' }))).toMatchObject({ type: 'not-found' });
  });

  it('domains alone are checked against the stored certificate', async () => {
    const c = await t.f.certificate(A);
    expect((await update(c.id, { domains: ['example.com'] })).domains).toEqual(['example.com']);
    expect((await refusal(update(c.id, { domains: ['other.example.org'] }))).errors).toHaveProperty(['domains.0']);
  });

  it('new material replaces the old one and moves the revision of every node serving it, and of no other node; a rename moves none', async () => {
    const c = await t.f.certificate(A);
    const other = await t.f.certificate(A);
    const profile = await t.f.profile({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: c.id } } });
    const otherProfile = await t.f.profile({
      protocol: 'trojan',
      stream: { network: 'tcp', security: 'tls', tls: { certificate_id: other.id } },
    });
    const [n1, n2, n3] = [(await t.f.node()).id, (await t.f.node()).id, (await t.f.node()).id];
    await t.f.inbound({ node_id: n1, profile_id: profile.id, port: 443 });
    await t.f.inbound({ node_id: n2, profile_id: profile.id, port: 443 });
    await t.f.inbound({ node_id: n3, profile_id: otherProfile.id, port: 443 });
    const before = await revisionsOf(t.bed, [n1, n2, n3]);
    const res = await update(c.id, B);
    expect(res.domains).toEqual(['other.example.org']);
    expect(res.issuer).toContain('CN=other.example.org');
    expect(res.cert_pem).toBe(B.cert_pem.trim().concat('\n'));
    expect(await revisionsOf(t.bed, [n1, n2, n3])).toEqual(plusOne(before, [n1, n2]));
    const row = await t.bed.deps.db.selectFrom('certificates').select('key_pem_enc').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(t.bed.deps.secrets.open(row.key_pem_enc as string)).toContain('PRIVATE KEY');

    await update(c.id, { name: 'renamed' });
    expect(await revisionsOf(t.bed, [n1, n2, n3])).toEqual(plusOne(before, [n1, n2]));
  });
});
