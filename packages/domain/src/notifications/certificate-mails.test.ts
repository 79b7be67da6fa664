import { describe, expect, it } from 'vitest';
import { eventMail } from './event-mails.ts';

// The mail an operator gets when an ACME renewal fails (certificate.issue_failed): what failed,
// that the old certificate still serves and until when, and how to retry.
describe('certificate.issue_failed mail', () => {
  const event = (payload: Record<string, unknown>) => ({
    id: 'evt_1',
    type: 'certificate.issue_failed',
    payload,
    occurred_at: new Date('2026-12-20T00:00:00Z'),
  });

  it('a failed renewal says the old certificate serves until its expiry (the moment and how far, @svc/format), when the next attempt comes and how to retry now', () => {
    const mail = eventMail(
      event({
        certificate_id: 'crt_1',
        name: null,
        domains: ['a.example.com', '*.a.example.com'],
        error: 'the CA refused: no TXT\r\nBcc: x@evil.example',
        failed_attempts: 2,
        serving_until: '2027-01-01T00:00:00.000Z',
      }),
      'owner@example.com',
      'https://cp.example.com',
    );
    expect(mail.subject).toBe('Certificate renewal failed: a.example.com, *.a.example.com');
    expect(mail.text).toContain('keeps serving until 2027-01-01 00:00 UTC, in 12 days.');
    expect(mail.text).toContain('Failed attempts: 2 (the next in 2 hours; never more than 24 hours apart)');
    expect(mail.text).toContain('POST https://cp.example.com/api/v1/certificates/crt_1/renew');
    // The CA's text stays on one line.
    expect(mail.text).toContain('Error:           the CA refused: no TXT Bcc: x@evil.example');
  });

  it('a failed first issuance says nothing is issued yet', () => {
    const mail = eventMail(
      event({ certificate_id: 'crt_2', name: 'x', domains: ['b.example.com'], error: 'e', failed_attempts: 1, serving_until: null }),
      'owner@example.com',
      'https://cp.example.com',
    );
    expect(mail.subject).toBe('Certificate issuance failed: b.example.com');
    expect(mail.text).toContain('nothing is issued yet');
  });
});
