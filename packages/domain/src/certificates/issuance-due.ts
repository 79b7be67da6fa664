import type { Database } from '@svc/db';
import type { ExpressionBuilder } from 'kysely';
import { claimStaleMs } from './renewal-rule.ts';

/**
 * Which certificates an issuance attempt may start on at `now`: ACME, their next attempt due,
 * and nobody issuing them (no claim, or a claim gone stale: claimStaleMs). One condition for the
 * attempt's claim and for the sweep that hands attempts out.
 */
export const dueForIssuance = (now: Date, propagationTimeoutSeconds: number) => (eb: ExpressionBuilder<Database, 'certificates'>) =>
  eb.and([
    eb('kind', '=', 'acme'),
    eb('next_attempt_at', '<=', now),
    eb.or([eb('issuing_since', 'is', null), eb('issuing_since', '<', new Date(now.getTime() - claimStaleMs(propagationTimeoutSeconds)))]),
  ]);
