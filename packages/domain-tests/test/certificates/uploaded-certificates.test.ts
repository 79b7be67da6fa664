import {
  announceExpiringCertificates,
  CreateCertificateInput,
  createCertificate,
  parseInput,
  statsOverview,
  UpdateCertificateInput,
  updateCertificate,
} from '@svc/domain';
import { caSignedCertificate, selfSignedCertificate } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { fileTestbed } from '../support.ts';

// Uploaded certificates (issue 16 item 4): the key matches, the chain builds, not expired; their
// expiry in the stats overview, and a certificate.expiring event 14 days before, once per material.
const t = fileTestbed();
const DAY = 86_400_000;

const upload = (input: Record<string, unknown>) =>
  createCertificate(t.bed.ctx(), parseInput(CreateCertificateInput, { kind: 'uploaded', ...input }));
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e) => e as { type: string; errors: Record<string, string> },
  );

describe('uploaded certificates are validated', () => {
  it('a chain that builds (leaf, then its issuer) is taken; one whose next certificate did not issue the leaf is refused', async () => {
    const good = caSignedCertificate('chain.example.com');
    expect((await upload({ cert_pem: good.cert_pem, key_pem: good.key_pem })).domains).toEqual(['chain.example.com']);
    const other = caSignedCertificate('other.example.com');
    const broken = await refusal(upload({ cert_pem: `${good.leaf}${other.ca}`, key_pem: good.key_pem }));
    expect(broken).toMatchObject({ type: 'validation', errors: { cert_pem: 'certificate 1 of the chain is not issued by certificate 2' } });
  });

  it('an expired certificate is refused on upload and as new material; a key of another certificate is refused', async () => {
    const soon = selfSignedCertificate({ cn: 'soon.example.com', days: 1 });
    const c = await upload(soon);
    t.bed.clock.advance(2 * DAY);
    const expired = await refusal(upload(selfSignedCertificate({ cn: 'x.example.com', days: 1 })));
    expect(expired?.errors.cert_pem).toMatch(/expired at/);
    const late = await refusal(upload(soon));
    expect(late?.errors.cert_pem).toMatch(/expired at/);
    const replaced = await refusal(updateCertificate(t.bed.ctx(), c.id, parseInput(UpdateCertificateInput, { ...soon })));
    expect(replaced?.errors.cert_pem).toMatch(/expired at/);
    const chain = caSignedCertificate('a.example.com');
    const mismatch = await refusal(upload({ cert_pem: chain.cert_pem, key_pem: chain.ca_key_pem }));
    expect(mismatch?.errors.key_pem).toBe('does not match the certificate');
  });
});

describe('expiry: the stats overview and certificate.expiring', () => {
  it('counts expired and soon-expiring certificates; announces each material once, 14 days before', async () => {
    const before = await statsOverview(t.bed.deps, {});
    const c = await upload(selfSignedCertificate({ cn: 'expiring.example.com', days: 20 }));
    const after = await statsOverview(t.bed.deps, {});
    expect(after.certificates.total).toBe(before.certificates.total + 1);
    expect(after.certificates.expiring_within_30_days).toBe(before.certificates.expiring_within_30_days + 1);
    const events = () =>
      t.bed.deps.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'certificate.expiring').execute();
    const mine = async () => (await events()).filter((e) => (e.payload as { certificate_id: string }).certificate_id === c.id);
    await announceExpiringCertificates(t.bed.ctx());
    expect(await mine()).toEqual([]);
    t.bed.clock.advance(7 * DAY);
    await announceExpiringCertificates(t.bed.ctx());
    await announceExpiringCertificates(t.bed.ctx());
    const once = await mine();
    expect(once).toHaveLength(1);
    const daysLeft = Math.floor((new Date(c.not_after as string).getTime() - t.bed.clock.now().getTime()) / DAY);
    expect(daysLeft).toBeLessThanOrEqual(14);
    expect(once[0]?.payload).toMatchObject({ certificate_id: c.id, domains: ['expiring.example.com'], days_left: daysLeft });
    // New material: announced again when its own time comes.
    await updateCertificate(
      t.bed.ctx(),
      c.id,
      parseInput(UpdateCertificateInput, { ...selfSignedCertificate({ cn: 'expiring.example.com', days: 10 }) }),
    );
    await announceExpiringCertificates(t.bed.ctx());
    expect(await mine()).toHaveLength(2);
  });
});
