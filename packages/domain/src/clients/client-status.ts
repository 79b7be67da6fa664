import type { ClientStatus } from '@svc/db';
import { ConflictError } from '../errors.ts';

/**
 * The client state machine of spec 3.1, in one place: the admin API (create, approve,
 * reject, ban, unban) and the portal (registration, sign-in) both ask it instead of
 * deciding on their own.
 *
 *   (none)   --admin creates-------------------> active   (email marked verified: the admin vouches)
 *   (none)   --registers, mode application-----> pending  (client.registered event)
 *   (none)   --registers, mode open------------> active   (client.registered event; email_verified_at
 *                                                          empty until the magic link / verified OAuth email)
 *   pending  --approve (admin)-----------------> active
 *   rejected --approve (admin)-----------------> active   (rule 3: approved after all)
 *   pending  --reject (admin)------------------> rejected
 *   active   --ban (admin)---------------------> disabled
 *   disabled --unban (admin)-------------------> active
 *
 * Sign-in needs both `status = active` and `email_verified_at` set (rule 1), so an
 * unconfirmed open-mode registration is `active` yet cannot sign in, and `pending` stays
 * the application queue only. Approval does not depend on the current registration mode:
 * records left pending by an earlier mode can still be cleared.
 */
export type ClientEvent = 'approve' | 'reject' | 'ban' | 'unban';

export interface ClientTransition {
  event: ClientEvent;
  by: 'admin';
  from: ClientStatus;
  to: ClientStatus;
  /** The event it raises (docs/events.md, "Clients"). */
  raises: 'client.approved' | 'client.rejected' | 'client.disabled' | 'client.enabled';
}

export const CLIENT_TRANSITIONS: readonly ClientTransition[] = [
  { event: 'approve', by: 'admin', from: 'pending', to: 'active', raises: 'client.approved' },
  // Spec 3.1 rule 3: a rejected record blocks its email until an admin deletes or approves it.
  { event: 'approve', by: 'admin', from: 'rejected', to: 'active', raises: 'client.approved' },
  { event: 'reject', by: 'admin', from: 'pending', to: 'rejected', raises: 'client.rejected' },
  { event: 'ban', by: 'admin', from: 'active', to: 'disabled', raises: 'client.disabled' },
  { event: 'unban', by: 'admin', from: 'disabled', to: 'active', raises: 'client.enabled' },
];

export type ClientOrigin = { by: 'admin' } | { by: 'registration'; mode: 'application' | 'open' };

/** Status of a new client, and whether its email counts as verified at creation. */
export function initialClientStatus(origin: ClientOrigin): { status: ClientStatus; emailVerified: boolean } {
  if (origin.by === 'admin') return { status: 'active', emailVerified: true };
  return origin.mode === 'application' ? { status: 'pending', emailVerified: false } : { status: 'active', emailVerified: false };
}

/** The next status for `event` from `from`, or a 409 naming what is allowed. */
export function clientTransition(from: ClientStatus, event: ClientEvent): ClientStatus {
  const t = CLIENT_TRANSITIONS.find((x) => x.event === event && x.from === from);
  if (!t) {
    const allowedFrom = CLIENT_TRANSITIONS.filter((x) => x.event === event).map((x) => x.from);
    throw new ConflictError(`cannot ${event} a client that is ${from} (only from ${allowedFrom.join(' or ')})`, {
      status: `is ${from}`,
    });
  }
  return t.to;
}

/**
 * An admin setting `status` directly (PATCH): only ban (active -> disabled) and unban
 * (disabled -> active). The same status again is no change (null); any other move is a
 * 409 (pending clients are approved or rejected through their own endpoints).
 */
export function adminStatusEvent(from: ClientStatus, to: 'active' | 'disabled'): ClientEvent | null {
  if (from === to) return null;
  const t = CLIENT_TRANSITIONS.find((x) => (x.event === 'ban' || x.event === 'unban') && x.from === from && x.to === to);
  if (!t) {
    const hint = from === 'pending' ? '; use approve or reject' : '';
    throw new ConflictError(`a ${from} client cannot be set to ${to}${hint}`, { status: `cannot go from ${from} to ${to}` });
  }
  return t.event;
}

/** The event a status change raises, if the state machine has that move. */
export const clientTransitionEvent = (from: ClientStatus, to: ClientStatus): ClientTransition['raises'] | null =>
  CLIENT_TRANSITIONS.find((x) => x.from === from && x.to === to)?.raises ?? null;

/** Spec 3.1 rule 1: whatever the sign-in method. */
export const clientMaySignIn = (c: { status: ClientStatus; email_verified_at: Date | null }): boolean =>
  c.status === 'active' && c.email_verified_at !== null;
