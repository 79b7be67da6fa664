import { checkAnswer, type Rfc2136Settings, signedUpdate, txtVisibleAt, updateTxt, zoneAt } from '@svc/providers';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// RFC 2136 dynamic update with TSIG against Debian's BIND (issue 16 item 2): one TXT value added
// or removed at a time, never the whole set, so the apex and wildcard challenges of one name
// can share `_acme-challenge.<name>`.
const HAVE_BIND = bindAvailable();
let bind: BindServer;
let s: Rfc2136Settings;
beforeAll(async () => {
  if (!HAVE_BIND) return;
  bind = await startBind();
  s = { server: '127.0.0.1', port: bind.port, key: { name: bind.keyName, algorithm: 'hmac-sha256', secret: bind.secret } };
});
afterAll(() => bind?.stop());

const now = () => new Date();
const NAME = () => `_acme-challenge.${bind.zone}`;
const values = async (name: string) => {
  const { Resolver } = await import('node:dns/promises');
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${bind.port}`]);
  return (await r.resolveTxt(name).catch(() => [] as string[][])).map((c) => c.join('')).sort();
};

describe.skipIf(!HAVE_BIND)('RFC 2136 with TSIG (BIND)', () => {
  it('finds the zone of a name by its SOA at the server', async () => {
    expect(await zoneAt(s, `_acme-challenge.www.${bind.zone}`)).toBe(bind.zone);
    await expect(zoneAt(s, '_acme-challenge.other.invalid')).rejects.toMatchObject({ type: 'unavailable' });
  });

  it('adds two values to one name at once and removes one: the other stays', async () => {
    const zone = await zoneAt(s, NAME());
    await Promise.all([
      updateTxt(s, zone, [{ op: 'add', name: NAME(), value: 'apex-value', ttl: 60 }], now),
      updateTxt(s, zone, [{ op: 'add', name: NAME(), value: 'wildcard-value', ttl: 60 }], now),
    ]);
    expect(await values(NAME())).toEqual(['apex-value', 'wildcard-value']);
    expect(await txtVisibleAt(s, NAME(), 'apex-value')).toBe(true);
    await updateTxt(s, zone, [{ op: 'delete', name: NAME(), value: 'apex-value' }], now);
    expect(await values(NAME())).toEqual(['wildcard-value']);
    expect(await txtVisibleAt(s, NAME(), 'apex-value')).toBe(false);
    // Removing a value that is not there changes nothing and is not an error (a retried cleanup).
    await updateTxt(s, zone, [{ op: 'delete', name: NAME(), value: 'apex-value' }], now);
    await updateTxt(s, zone, [{ op: 'delete', name: NAME(), value: 'wildcard-value' }], now);
    expect(await values(NAME())).toEqual([]);
  });

  it('a value longer than 255 bytes goes as several character-strings and reads back whole', async () => {
    const long = 'x'.repeat(300);
    await updateTxt(s, bind.zone, [{ op: 'add', name: NAME(), value: long, ttl: 60 }], now);
    expect(await txtVisibleAt(s, NAME(), long)).toBe(true);
    await updateTxt(s, bind.zone, [{ op: 'delete', name: NAME(), value: long }], now);
  });

  it('a wrong secret is refused as NOTAUTH (BADSIG); a record the key may not change is REFUSED; neither names the secret', async () => {
    const wrong = { ...s, key: { ...s.key, secret: Buffer.alloc(32, 7).toString('base64') } };
    const bad = await updateTxt(wrong, bind.zone, [{ op: 'add', name: NAME(), value: 'nope', ttl: 60 }], now).catch((e) => e);
    expect(bad).toMatchObject({ type: 'unavailable' });
    expect(bad.message).toMatch(/NOTAUTH \(BADSIG\)/);
    expect(bad.message).not.toContain(wrong.key.secret);
    expect(await values(NAME())).toEqual([]);
    const outside = await updateTxt(
      s,
      'other.invalid',
      [{ op: 'add', name: '_acme-challenge.other.invalid', value: 'x', ttl: 60 }],
      now,
    ).catch((e) => e);
    expect(outside).toMatchObject({ type: 'unavailable' });
    expect(outside.message).toMatch(/NOTAUTH|NOTZONE|REFUSED/);
  });

  it('a server that is not there is unavailable, not a crash', async () => {
    const down = { ...s, port: 9 };
    await expect(updateTxt(down, bind.zone, [{ op: 'add', name: NAME(), value: 'x', ttl: 60 }], now)).rejects.toMatchObject({
      type: 'unavailable',
    });
  });
});

describe('the answer parser takes hostile bytes', () => {
  it('random and truncated answers are refused with an error, never a hang or an out-of-range read', () => {
    const key = { name: 'acme-key', algorithm: 'hmac-sha256' as const, secret: Buffer.alloc(32, 1).toString('base64') };
    const req = signedUpdate(
      'example.test',
      [{ op: 'add', name: '_acme-challenge.example.test', value: 'v', ttl: 60 }],
      key,
      1_700_000_000,
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.boolean(), (bytes, sameId) => {
        const answer = Buffer.from(bytes);
        if (sameId && answer.length >= 2) answer.writeUInt16BE(req.id, 0);
        try {
          const r = checkAnswer(answer, req, key, 1_700_000_000);
          // Random bytes can only ever pass as a refusal, never as a signed success.
          expect(r.signed && r.rcode === 0 && r.tsigError === 0).toBe(false);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      { seed: 2136, numRuns: 2000 },
    );
  });
});
