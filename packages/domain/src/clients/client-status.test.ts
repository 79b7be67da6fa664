import { describe, expect, it } from 'vitest';
import { adminStatusEvent, clientMaySignIn, clientTransition, initialClientStatus } from './client-status.ts';

describe('client state machine (spec 3.1)', () => {
  it('starts active and verified when an admin creates; pending (application) or active unverified (open) on registration', () => {
    expect(initialClientStatus({ by: 'admin' })).toEqual({ status: 'active', emailVerified: true });
    expect(initialClientStatus({ by: 'registration', mode: 'application' })).toEqual({ status: 'pending', emailVerified: false });
    expect(initialClientStatus({ by: 'registration', mode: 'open' })).toEqual({ status: 'active', emailVerified: false });
  });
  it('allows exactly approve/reject from pending, approve from rejected (rule 3), ban from active, unban from disabled', () => {
    const statuses = ['pending', 'active', 'rejected', 'disabled'] as const;
    const allowed: Record<string, string> = {
      'approve:pending': 'active',
      'approve:rejected': 'active',
      'reject:pending': 'rejected',
      'ban:active': 'disabled',
      'unban:disabled': 'active',
    };
    for (const event of ['approve', 'reject', 'ban', 'unban'] as const) {
      for (const from of statuses) {
        const to = allowed[`${event}:${from}`];
        if (to) expect(clientTransition(from, event)).toBe(to);
        else expect(() => clientTransition(from, event)).toThrow(expect.objectContaining({ type: 'conflict' }));
      }
    }
  });
  it('PATCH status maps to ban/unban, same status is no change, the rest is a conflict', () => {
    expect(adminStatusEvent('active', 'disabled')).toBe('ban');
    expect(adminStatusEvent('disabled', 'active')).toBe('unban');
    expect(adminStatusEvent('active', 'active')).toBeNull();
    for (const from of ['pending', 'rejected'] as const) {
      for (const to of ['active', 'disabled'] as const) {
        expect(() => adminStatusEvent(from, to)).toThrow(expect.objectContaining({ type: 'conflict' }));
      }
    }
  });
  it('sign-in needs active and a verified email', () => {
    const at = new Date();
    expect(clientMaySignIn({ status: 'active', email_verified_at: at })).toBe(true);
    expect(clientMaySignIn({ status: 'active', email_verified_at: null })).toBe(false);
    expect(clientMaySignIn({ status: 'disabled', email_verified_at: at })).toBe(false);
  });
});
