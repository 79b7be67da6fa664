import { describe, expect, it } from 'vitest';
import { shadowsocksUserKey } from './credentials.ts';
import {
  currentStatus,
  linkStatus,
  statusClockChangesAt,
  storedStatusAsOf,
  subscriptionServes,
  subscriptionStatus,
} from './subscription-status.ts';

const now = new Date('2026-06-01T12:00:00Z');
const base = { admin_disabled: false, used_bytes: 0, traffic_limit_bytes: null, expires_at: null };

describe('subscriptionStatus: disabled > expired > limited > active', () => {
  it('is active with no limit and no expiry', () => {
    expect(subscriptionStatus(base, now)).toBe('active');
  });
  it('is limited once used_bytes reaches the limit (a limit of 0 is reached at once)', () => {
    expect(subscriptionStatus({ ...base, traffic_limit_bytes: 100, used_bytes: 99 }, now)).toBe('active');
    expect(subscriptionStatus({ ...base, traffic_limit_bytes: 100, used_bytes: 100 }, now)).toBe('limited');
    expect(subscriptionStatus({ ...base, traffic_limit_bytes: 0 }, now)).toBe('limited');
  });
  it('is expired from expires_at on (inclusive), before limited', () => {
    expect(subscriptionStatus({ ...base, expires_at: new Date(now.getTime() + 1) }, now)).toBe('active');
    expect(subscriptionStatus({ ...base, expires_at: now }, now)).toBe('expired');
    expect(subscriptionStatus({ ...base, expires_at: now, traffic_limit_bytes: 0 }, now)).toBe('expired');
  });
  it('is disabled whenever the admin disabled it', () => {
    expect(subscriptionStatus({ ...base, admin_disabled: true, expires_at: now, traffic_limit_bytes: 0 }, now)).toBe('disabled');
  });
  it('a stored row: disabled stays disabled, anything else is computed again', () => {
    const row = { status: 'active' as const, used_bytes: 5, traffic_limit_bytes: 5, expires_at: null };
    expect(currentStatus(row, now)).toBe('limited');
    expect(currentStatus({ ...row, status: 'disabled' }, now)).toBe('disabled');
    expect(currentStatus({ ...row, status: 'limited', traffic_limit_bytes: null }, now)).toBe('active');
  });
  it('users run on nodes only for an active subscription of an active client', () => {
    expect(subscriptionServes('active', 'active')).toBe(true);
    expect(subscriptionServes('active', 'disabled')).toBe(false);
    expect(subscriptionServes('active', 'pending')).toBe(false);
    expect(subscriptionServes('limited', 'active')).toBe(false);
  });
});

describe('shadowsocksUserKey', () => {
  const stored = Buffer.alloc(32, 7).toString('base64');
  it('2022-blake3-aes-128-gcm gets a 16-byte key; other methods the stored 32-byte key', () => {
    expect(Buffer.from(shadowsocksUserKey('2022-blake3-aes-128-gcm', stored), 'base64')).toHaveLength(16);
    expect(shadowsocksUserKey('2022-blake3-aes-256-gcm', stored)).toBe(stored);
    expect(shadowsocksUserKey('chacha20-ietf-poly1305', stored)).toBe(stored);
  });
});

describe('linkStatus: what a subscription link shows its apps', () => {
  it("the subscription's status while its client is active; pending while the client awaits approval; disabled otherwise", () => {
    for (const s of ['active', 'limited', 'expired', 'disabled'] as const) expect(linkStatus(s, 'active')).toBe(s);
    expect(linkStatus('active', 'pending')).toBe('pending');
    expect(linkStatus('active', 'rejected')).toBe('disabled');
    expect(linkStatus('limited', 'disabled')).toBe('disabled');
  });
});

describe('statusClockChangesAt: until when a stored status reads the same whatever the clock', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const at = (iso: string) => new Date(iso);
  it('an active or limited row with its expiry ahead changes at that expiry, and storedStatusAsOf agrees on both sides of it', () => {
    for (const status of ['active', 'limited'] as const) {
      const row = { status, expires_at: at('2026-12-01T13:00:00Z') };
      const changes = statusClockChangesAt(row, now);
      expect(changes).toBe(row.expires_at.getTime());
      expect(storedStatusAsOf(row, new Date((changes as number) - 1))).toBe(status);
      expect(storedStatusAsOf(row, new Date(changes as number))).toBe('expired');
    }
  });
  it('never for a row without an expiry, one already past it, or a status the clock leaves alone', () => {
    expect(statusClockChangesAt({ status: 'active', expires_at: null }, now)).toBeNull();
    expect(statusClockChangesAt({ status: 'active', expires_at: now }, now)).toBeNull();
    expect(statusClockChangesAt({ status: 'active', expires_at: at('2026-12-01T11:00:00Z') }, now)).toBeNull();
    expect(statusClockChangesAt({ status: 'disabled', expires_at: at('2026-12-01T13:00:00Z') }, now)).toBeNull();
    expect(statusClockChangesAt({ status: 'expired', expires_at: at('2026-12-01T13:00:00Z') }, now)).toBeNull();
  });
});
