import type { Actor } from '../shared/context.ts';
import { mayReadLinks } from '../subscriptions/subscription-view.ts';

/**
 * Who reads why an ACME or DNS step failed: the CA's or DNS provider's words, or an error page
 * of whatever answered at the URL or host an admin named (an internal service's, when private
 * networks are allowed). The rule of webhook excerpts and subscription links (mayReadLinks):
 * owners, admins and the shell; a viewer reads that it failed, not what was said.
 */
export const mayReadOutboundAnswers = (actor: Actor): boolean => mayReadLinks(actor);

/** What a viewer reads in place of an error text. */
export const OUTBOUND_ANSWER_HIDDEN = 'failed (owners and admins read why)';

export const visibleError = (actor: Actor, error: string | null): string | null =>
  error === null || mayReadOutboundAnswers(actor) ? error : OUTBOUND_ANSWER_HIDDEN;
