import type { ActorType, AuditLogRow } from '@svc/db';
import { mayReadOutboundAnswers, OUTBOUND_ANSWER_HIDDEN } from '../acme/answer-visibility.ts';
import type { Actor, DomainContext } from '../shared/context.ts';
import { type ListPage, type ListRequest, type ListSpec, listPage, type SearchBranch, searchTerms } from '../shared/list-query.ts';

export interface AuditFilter extends ListRequest {
  actor_id?: string | undefined;
  entity_type?: string | undefined;
  entity_id?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export interface AuditView {
  id: string;
  at: string;
  actor_type: ActorType;
  actor_id: string | null;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  ip: string | null;
  details: Record<string, unknown> | null;
}

export const auditView = (r: AuditLogRow): AuditView => ({
  id: r.id,
  at: r.at.toISOString(),
  actor_type: r.actor_type,
  actor_id: r.actor_id,
  action: r.action,
  entity_type: r.entity_type,
  entity_id: r.entity_id,
  ip: r.ip,
  details: r.details,
});

/** Entries whose details.error is what a CA or DNS provider (a destination an admin named) said. */
const OUTBOUND_ANSWER_ACTIONS = new Set(['certificate.issue_failed']);

/** The entry as `actor` reads it: a viewer does not read the words of a CA or DNS provider (answer-visibility.ts). */
function readView(actor: Actor, r: AuditLogRow): AuditView {
  const view = auditView(r);
  if (!OUTBOUND_ANSWER_ACTIONS.has(view.action) || !view.details || !('error' in view.details) || mayReadOutboundAnswers(actor))
    return view;
  return { ...view, details: { ...view.details, error: OUTBOUND_ANSWER_HIDDEN } };
}

export const AUDIT_LIST: ListSpec = { idColumn: 'id', defaultSort: '-created', sorts: {} };

/**
 * Newest first by default (`sort=created` for oldest first); `from` inclusive, `to`
 * exclusive. `q` matches an action by its start (`subscription.` is every subscription
 * action) and an entity, actor or entry id exactly.
 */
export async function listAuditLog(ctx: DomainContext, f: AuditFilter): Promise<ListPage<AuditView>> {
  let q = ctx.db.selectFrom('audit_log').selectAll();
  if (f.actor_id) q = q.where('actor_id', '=', f.actor_id);
  if (f.entity_type) q = q.where('entity_type', '=', f.entity_type);
  if (f.entity_id) q = q.where('entity_id', '=', f.entity_id);
  if (f.from) q = q.where('at', '>=', f.from);
  if (f.to) q = q.where('at', '<', f.to);
  const terms = searchTerms(f.q);
  const anyOf: SearchBranch[] | undefined = terms && [
    (b) => b.where('action', 'like', terms.prefix),
    (b) => b.where('entity_id', '=', terms.text),
    (b) => b.where('actor_id', '=', terms.text),
    (b) => b.where('id', '=', terms.text),
  ];
  return listPage(ctx.db, q, f, AUDIT_LIST, (rows) => rows.map((r) => readView(ctx.actor, r)), anyOf);
}
