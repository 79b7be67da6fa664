import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from './webhook-signature.ts';

// The scheme docs/notifications.md tells receivers to implement, checked against a plain
// HMAC computed here (not through our signer).
const secret = 'whsec_test-secret';
const body = '{"id":"evt_1","type":"client.registered","occurred_at":"2026-11-24T10:00:00.000Z","data":{}}';
const at = new Date('2026-11-24T10:00:00.000Z');
const t = at.getTime() / 1000;
const hex = (key: string, text: string) => createHmac('sha256', key).update(text).digest('hex');

describe('X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>', () => {
  it('is exactly the documented HMAC over "<t>.<body>" with the whole secret string as key', () => {
    expect(signWebhook(secret, body, at)).toBe(`t=${t},v1=${hex(secret, `${t}.${body}`)}`);
  });

  it('verifies within the tolerance; refuses a wrong secret, a changed body, a changed timestamp, a replay after 5 minutes', () => {
    const header = signWebhook(secret, body, at);
    expect(verifyWebhookSignature(secret, body, header, { now: at })).toBe(true);
    expect(verifyWebhookSignature(secret, body, header, { now: new Date(at.getTime() + 299_000) })).toBe(true);
    expect(verifyWebhookSignature(secret, body, header, { now: new Date(at.getTime() + 301_000) })).toBe(false);
    expect(verifyWebhookSignature(secret, body, header, { now: new Date(at.getTime() - 301_000) })).toBe(false);
    expect(verifyWebhookSignature('whsec_other', body, header, { now: at })).toBe(false);
    expect(verifyWebhookSignature(secret, `${body}\n`, header, { now: at })).toBe(false);
    expect(verifyWebhookSignature(secret, body, header.replace(`t=${t}`, `t=${t + 1}`), { now: at })).toBe(false);
  });

  it('accepts any of several v1 values and ignores unknown schemes (room to grow); refuses malformed headers', () => {
    const good = hex(secret, `${t}.${body}`);
    const bad = hex('nope', `${t}.${body}`);
    expect(verifyWebhookSignature(secret, body, `t=${t}, v0=abc, v1=${bad}, v1=${good}`, { now: at })).toBe(true);
    for (const header of [undefined, null, '', `v1=${good}`, `t=${t}`, `t=abc,v1=${good}`, `t=${t},v1=${good.slice(2)}`, 'x'.repeat(5000)])
      expect(verifyWebhookSignature(secret, body, header, { now: at }), String(header).slice(0, 40)).toBe(false);
  });
});
