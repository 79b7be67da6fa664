import {
  CreateCertificateInput,
  claimStaleMs,
  createCertificate,
  enqueueDueIssuance,
  ISSUING_CLAIM_STALE_MS,
  issueAcmeCertificate,
  nextRenewalAt,
  parseInput,
  RENEW_BEFORE_DAYS,
  renewalDueAt,
  renewCertificate,
  retryAfterMs,
  statsOverview,
} from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { fileTestbed, refusal } from '../support.ts';

// The rules of ACME issuance that need no CA (issue 16 item 3; the CA's part is the worker's
// end-to-end test): when renewal is due, how failures back off, one attempt at a time, a dead
// worker's claim taken over, what the sweep hands over. The account's directory is a closed
// port here, so every attempt fails fast and says why.
const t = fileTestbed();
const DAY = 86_400_000;
const HOUR = 3_600_000;

async function acmeCertificate(): Promise<string> {
  const account = await t.f.acmeAccount({ directory_url: 'https://127.0.0.1:1/directory' });
  const provider = await t.f.dnsProvider({
    kind: 'rfc2136',
    credentials: { server: '127.0.0.1', port: '1', key_name: 'k', key_secret: Buffer.alloc(32, 1).toString('base64') },
  });
  const c = await createCertificate(
    t.bed.ctx(),
    parseInput(CreateCertificateInput, {
      kind: 'acme',
      acme_account_id: account.id,
      dns_provider_id: provider.id,
      domains: ['rules.example.com'],
    }),
  );
  return c.id;
}
const rowOf = (id: string) => t.bed.deps.db.selectFrom('certificates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('renewal rule', () => {
  it('renewal is due 30 days before expiry, and never before half of a short lifetime has passed', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const days = (n: number) => new Date(from.getTime() + n * DAY);
    expect(RENEW_BEFORE_DAYS).toBe(30);
    expect(renewalDueAt(from, days(90))).toEqual(days(60));
    expect(renewalDueAt(from, days(45))).toEqual(days(22.5));
    expect(renewalDueAt(from, days(6))).toEqual(days(3));
  });

  it('a certificate just issued is not renewed within the hour, whatever the clocks say', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const from = new Date('2026-01-01T00:00:00Z');
    // Our clock months ahead of the CA's: due long ago by the rule, yet an hour from now.
    expect(nextRenewalAt(from, new Date(from.getTime() + 90 * DAY), now)).toEqual(new Date(now.getTime() + HOUR));
    expect(nextRenewalAt(now, new Date(now.getTime() + 90 * DAY), now)).toEqual(new Date(now.getTime() + 60 * DAY));
  });

  it('a claim is taken over after 15 minutes, or after the propagation wait plus 10 minutes when that is longer', () => {
    expect(claimStaleMs(300)).toBe(15 * 60_000);
    expect(claimStaleMs(3600)).toBe(70 * 60_000);
  });

  it('failed attempts back off 1 h, 2 h, 4 h ... at most 24 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => retryAfterMs(n) / HOUR)).toEqual([1, 2, 4, 8, 16, 24, 24, 24]);
  });
});

describe('attempts', () => {
  it('two workers on one due certificate: one attempts, the other finds it claimed; the failure is recorded once', async () => {
    const id = await acmeCertificate();
    const outcomes = await Promise.all([issueAcmeCertificate(t.bed.ctx(), id), issueAcmeCertificate(t.bed.ctx(), id)]);
    expect(outcomes.sort()).toEqual(['failed', 'not due']);
    const row = await rowOf(id);
    expect(row).toMatchObject({ status: 'failed', failed_attempts: 1, issuing_since: null, cert_pem: null });
    expect(row.last_error).toMatch(/: not reachable$/);
    expect((row.next_attempt_at as Date).getTime() - t.bed.clock.now().getTime()).toBe(HOUR);
    expect((await statsOverview(t.bed.deps, {})).certificates.failing).toBeGreaterThan(0);
    // Not due again before its backoff.
    expect(await issueAcmeCertificate(t.bed.ctx(), id)).toBe('not due');
  });

  it('a claim older than 15 minutes (its worker died) is taken over; a fresh one is not', async () => {
    const id = await acmeCertificate();
    const now = t.bed.clock.now();
    await t.bed.deps.db
      .updateTable('certificates')
      .set({ issuing_since: new Date(now.getTime() - ISSUING_CLAIM_STALE_MS + 60_000) })
      .where('id', '=', id)
      .execute();
    expect(await issueAcmeCertificate(t.bed.ctx(), id)).toBe('not due');
    expect(await enqueueDueIssuance(t.bed.ctx())).toBe(0);
    t.bed.clock.advance(2 * 60_000);
    expect(await enqueueDueIssuance(t.bed.ctx())).toBe(1);
    expect(await issueAcmeCertificate(t.bed.ctx(), id)).toBe('failed');
    expect((await rowOf(id)).failed_attempts).toBe(1);
  });

  it('POST /renew makes a backing-off certificate due now; an uploaded one is refused (409)', async () => {
    const id = await acmeCertificate();
    await issueAcmeCertificate(t.bed.ctx(), id);
    expect(await issueAcmeCertificate(t.bed.ctx(), id)).toBe('not due');
    const view = await renewCertificate(t.bed.ctx(), id);
    expect(view.next_attempt_at).toBe(t.bed.clock.now().toISOString());
    expect(await issueAcmeCertificate(t.bed.ctx(), id)).toBe('failed');
    expect((await rowOf(id)).failed_attempts).toBe(2);
    const uploaded = await t.f.certificate();
    expect(await refusal(renewCertificate(t.bed.ctx(), uploaded.id))).toMatchObject({ type: 'conflict' });
  });
});
