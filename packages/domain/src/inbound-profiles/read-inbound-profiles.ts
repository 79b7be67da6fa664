import type { Protocol } from '@svc/db';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type InboundProfileView, inboundProfileView } from './profile.ts';

export interface InboundProfileFilter extends PageRequest {
  protocol?: Protocol | undefined;
  certificate_id?: string | undefined;
}

/** Oldest first, by id. */
export async function listInboundProfiles(ctx: Pick<DomainContext, 'db'>, f: InboundProfileFilter): Promise<Page<InboundProfileView>> {
  let q = ctx.db.selectFrom('inbound_profiles').selectAll();
  if (f.protocol) q = q.where('protocol', '=', f.protocol);
  if (f.certificate_id) q = q.where('certificate_id', '=', f.certificate_id);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, inboundProfileView);
}

export async function getInboundProfile(ctx: Pick<DomainContext, 'db'>, id: string): Promise<InboundProfileView> {
  const row = await ctx.db.selectFrom('inbound_profiles').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('inbound profile', id);
  return inboundProfileView(row);
}
