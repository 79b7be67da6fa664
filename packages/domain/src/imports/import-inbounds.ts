import { isIP } from 'node:net';
import type { Db } from '@svc/db';
import { ValidationError } from '../errors.ts';
import { insertInboundProfile } from '../inbound-profiles/create-inbound-profile.ts';
import { insertInbound } from '../inbounds/create-inbound.ts';
import { lockNodePorts, portUsers } from '../nodes/node-ports.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import type { ImportBatch, ImportNotCarried } from './import-batch.ts';
import type { ImportedInboundOutcome } from './import-report.ts';
import { importedInboundProfile } from './imported-inbound-profile.ts';

const NAME_MAX = 100;

export interface SourceInbounds {
  /** Access group id per source inbound tag. */
  groupIds: Map<string, string>;
  outcomes: ImportedInboundOutcome[];
  counts: { access_groups_created: number; inbound_profiles_created: number; inbounds_created: number };
}

export interface TargetNode {
  id: string;
  name: string;
}

/**
 * The nodes the operator names for the source's inbounds, by id or name; an unknown one is the
 * operator's mistake, refused before anything is written.
 */
export async function targetNodes(trx: Db, given: readonly string[]): Promise<TargetNode[]> {
  const nodes: TargetNode[] = [];
  const unknown: string[] = [];
  for (const ref of [...new Set(given)]) {
    const node = await trx
      .selectFrom('nodes')
      .select(['id', 'name'])
      .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
      .executeTakeFirst();
    if (node) {
      if (!nodes.some((n) => n.id === node.id)) nodes.push(node);
    } else unknown.push(ref);
  }
  if (unknown.length > 0) throw new ValidationError('invalid import', { nodes: `no such node: ${unknown.join(', ')}` });
  return nodes;
}

export async function assertCertificate(trx: Db, certificateId: string | null): Promise<void> {
  if (certificateId === null) return;
  const cert = await trx.selectFrom('certificates').select('id').where('id', '=', certificateId).executeTakeFirst();
  if (!cert) throw new ValidationError('invalid import', { tls_certificate: 'no such certificate' });
}

/**
 * Each source inbound stands here as one access group (its users' subscriptions are in it) and
 * one inbound profile (its protocol, transport and security as the source runs them), bound on
 * each node the operator names at the source's port, and put in the group: the links customers
 * hold point at a node of ours that serves them. What an earlier import made is found again, not
 * made twice; a port a node already uses for something else is reported, not taken.
 */
export async function importSourceInbounds(
  ctx: DomainContext,
  uow: UnitOfWork,
  sourceId: string,
  name: string,
  batch: ImportBatch,
  nodes: readonly TargetNode[],
  tlsCertificateId: string | null,
  notCarried: ImportNotCarried[],
): Promise<SourceInbounds> {
  const trx = uow.db;
  const now = ctx.clock.now();
  const earlier = new Map(
    (
      await trx.selectFrom('imported_inbounds').select(['tag', 'access_group_id', 'profile_id']).where('source_id', '=', sourceId).execute()
    ).map((r) => [r.tag, r]),
  );
  const groupIds = new Map<string, string>();
  for (const [tag, r] of earlier) groupIds.set(tag, r.access_group_id);
  const counts = { access_groups_created: 0, inbound_profiles_created: 0, inbounds_created: 0 };
  const outcomes: ImportedInboundOutcome[] = [];

  for (const inbound of batch.inbounds) {
    const seen = earlier.get(inbound.tag);
    let groupId = seen?.access_group_id;
    if (!groupId) {
      groupId = newId('agr', now.getTime());
      const groupName = await freeName(trx, 'access_groups', `${name}: ${inbound.tag}`);
      await trx.insertInto('access_groups').values({ id: groupId, name: groupName, created_at: now, updated_at: now }).execute();
      await trx
        .insertInto('imported_inbounds')
        .values({ source_id: sourceId, tag: inbound.tag, access_group_id: groupId, profile_id: null })
        .execute();
      groupIds.set(inbound.tag, groupId);
      counts.access_groups_created++;
    }
    const group = await trx.selectFrom('access_groups').select('name').where('id', '=', groupId).executeTakeFirstOrThrow();

    // The profile: the one an earlier import made (an operator's edits to it stand), or a new one.
    let profile = seen?.profile_id
      ? await trx.selectFrom('inbound_profiles').select(['id', 'name']).where('id', '=', seen.profile_id).executeTakeFirst()
      : undefined;
    if (!profile) {
      const profileName = await freeName(trx, 'inbound_profiles', `${name}: ${inbound.tag}`);
      const made = importedInboundProfile(inbound, batch.users, profileName, { tlsCertificateId });
      if ('why' in made) notCarried.push({ what: `inbound ${inbound.tag}`, why: `no inbound profile made: ${made.why}` });
      else {
        try {
          const view = await insertInboundProfile(ctx, uow, made.fields, { shadowsocksServerKey: made.shadowsocksServerKey });
          profile = { id: view.id, name: view.name };
          counts.inbound_profiles_created++;
          await trx
            .updateTable('imported_inbounds')
            .set({ profile_id: view.id })
            .where('source_id', '=', sourceId)
            .where('tag', '=', inbound.tag)
            .execute();
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          notCarried.push({
            what: `inbound ${inbound.tag}`,
            why: `no inbound profile made: ${err.message} (${Object.entries(err.errors ?? {})
              .map(([k, v]) => `${k}: ${v}`)
              .join('; ')})`,
          });
        }
      }
    }

    const boundOn: string[] = [];
    if (profile) {
      const listen = inbound.listen !== null && isIP(inbound.listen) !== 0 ? inbound.listen : null;
      if (inbound.listen !== null && listen === null && nodes.length > 0)
        notCarried.push({
          what: `inbound ${inbound.tag}: listen`,
          why: `${inbound.listen} is not an IP address: bound on every address instead`,
        });
      for (const node of nodes) {
        const mine = await trx
          .selectFrom('inbounds')
          .select('id')
          .where('node_id', '=', node.id)
          .where('profile_id', '=', profile.id)
          .executeTakeFirst();
        let inboundId = mine?.id;
        if (!inboundId) {
          await lockNodePorts(trx, [node.id]);
          const users = await portUsers(trx, node.id, inbound.port);
          if (users.inbounds.length > 0 || users.chains.length > 0) {
            notCarried.push({
              what: `inbound ${inbound.tag} on node ${node.name}`,
              why: `port ${inbound.port} there is already used by ${users.inbounds.length > 0 ? 'another inbound' : 'a chain'}`,
            });
            continue;
          }
          const made = await insertInbound(ctx, uow, {
            node_id: node.id,
            profile_id: profile.id,
            port: inbound.port,
            listen,
            host: null,
            chain_id: null,
          });
          inboundId = made.id;
          counts.inbounds_created++;
        }
        await trx
          .insertInto('access_group_inbounds')
          .values({ access_group_id: groupId, inbound_id: inboundId })
          .onConflict((oc) => oc.doNothing())
          .execute();
        boundOn.push(node.name);
      }
    }
    outcomes.push({
      tag: inbound.tag,
      protocol: inbound.protocol,
      port: inbound.port,
      access_group: group.name,
      profile: profile?.name ?? null,
      nodes: boundOn,
    });
  }
  return { groupIds, outcomes, counts };
}

/** `base`, or `base (2)`, `base (3)`… : the first name no row of the table holds. */
async function freeName(trx: Db, table: 'access_groups' | 'inbound_profiles', wanted: string): Promise<string> {
  const base = wanted.slice(0, NAME_MAX - 5);
  let name = base;
  for (let n = 2; await trx.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst(); n++) name = `${base} (${n})`;
  return name;
}
