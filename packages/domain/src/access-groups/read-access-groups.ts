import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type AccessGroupView, accessGroupView, membersOf } from './access-group.ts';

export interface AccessGroupFilter extends PageRequest {
  /** Groups that contain this inbound. */
  inbound_id?: string | undefined;
}

/** Oldest first, by id; members fetched for the whole page in one query. */
export async function listAccessGroups(ctx: Pick<DomainContext, 'db'>, f: AccessGroupFilter): Promise<Page<AccessGroupView>> {
  let q = ctx.db.selectFrom('access_groups as g').selectAll('g');
  if (f.inbound_id) {
    const inboundId = f.inbound_id;
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('access_group_inbounds as m')
          .select('m.inbound_id')
          .whereRef('m.access_group_id', '=', 'g.id')
          .where('m.inbound_id', '=', inboundId),
      ),
    );
  }
  const rows = await keysetRows(q, f, { column: 'g.id' });
  const members = await membersOf(
    ctx.db,
    rows.slice(0, f.limit).map((r) => r.id),
  );
  return toPage(rows, f.limit, (r) => accessGroupView(r, members.get(r.id) ?? []));
}

export async function getAccessGroup(ctx: Pick<DomainContext, 'db'>, id: string): Promise<AccessGroupView> {
  const row = await ctx.db.selectFrom('access_groups').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('access group', id);
  return accessGroupView(row, (await membersOf(ctx.db, [id])).get(id) ?? []);
}
