import { deleteCertificate, getCertificate, parseInput, UpdateCertificateInput, updateCertificate } from '@svc/domain';
import { selfSignedCertificate, TEST_OWNER } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, refusal } from '../support.ts';

const t = fileTestbed();

describe('deleteCertificate', () => {
  it('removes an unused certificate; afterwards it is not found', async () => {
    const c = await t.f.certificate({ name: 'doomed' });
    await deleteCertificate(t.bed.ctx(), c.id);
    expect(await refusal(getCertificate(t.bed.ctx(), c.id))).toMatchObject({ type: 'not-found' });
    expect(await refusal(deleteCertificate(t.bed.ctx(), c.id))).toMatchObject({ type: 'not-found' });
  });

  it('is refused as a conflict naming the inbound profiles that use it', async () => {
    const c = await t.f.certificate();
    const profile = await t.f.profile({ protocol: 'trojan', stream: { network: 'tcp', security: 'tls', tls: { certificate_id: c.id } } });
    const err = await refusal(deleteCertificate(t.bed.ctx(), c.id));
    expect(err.type).toBe('conflict');
    expect(err.extra).toEqual({ blocked_by: { inbound_profiles: [profile.id] } });
    expect(err.message).toContain(profile.id);
  });
});

describe('the audit of certificates', () => {
  it('create, update and delete each write an entry by the acting admin, without key material', async () => {
    const c = await t.f.certificate({ name: 'audited' });
    const other = selfSignedCertificate({ cn: 'other.example.org' });
    await updateCertificate(t.bed.ctx(), c.id, parseInput(UpdateCertificateInput, { ...other, name: 'audited-2' }));
    await deleteCertificate(t.bed.ctx(), c.id);
    const rows = await auditOf(t.bed, c.id);
    expect(rows.map((r) => r.action)).toEqual(['certificate.created', 'certificate.updated', 'certificate.deleted']);
    for (const r of rows) {
      expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'certificate' });
      expect(JSON.stringify(r.details)).not.toContain('PRIVATE KEY');
    }
    expect(rows[1]?.details).toMatchObject({ material_replaced: true });
  });
});
