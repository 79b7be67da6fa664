import { sql } from 'kysely';
import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfProfile } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { newShadowsocksServerKey } from '../subscriptions/credentials.ts';
import { certificateGone, profileNameTaken, stripUndefined } from './create-inbound-profile.ts';
import { type InboundProfileView, inboundProfileView, type ProfileFields, resolveProfile, type Sniffing } from './profile.ts';
import { ProfileName, Protocol, ShadowsocksMethod, SniffingInput, VlessFlow } from './profile-fields.ts';
import { getInboundProfile } from './read-inbound-profiles.ts';
import { StreamSettingsInput } from './stream-fields.ts';

/** PATCH /inbound-profiles/{id}: a merge; absent fields stay as they are. */
export const UpdateInboundProfileInput = z
  .object({
    name: ProfileName.optional(),
    protocol: Protocol.optional(),
    // register, not meta: meta copies the schema, and the OpenAPI generator then inlines the
    // component these name instead of referring to it.
    stream: StreamSettingsInput.optional().register(z.globalRegistry, {
      description:
        'Replaces the whole stream object (not merged: the settings depend on network and security). REALITY: the current private key and short ids are kept when omitted.',
    }),
    sniffing: SniffingInput.optional().register(z.globalRegistry, {
      description: 'Merged field by field into the current sniffing settings',
    }),
    vless_flow: VlessFlow.nullable().optional().meta({ description: 'null removes' }),
    shadowsocks_method: ShadowsocksMethod.nullable().optional().meta({ description: 'null removes' }),
    block_bittorrent: z.boolean().optional(),
  })
  .strict()
  .brand<'UpdateInboundProfileInput'>();
export type UpdateInboundProfileInput = z.output<typeof UpdateInboundProfileInput>;

/** Fields that are part of what a node runs; a change to any of them moves the revision of every node with an inbound of the profile. */
const NODE_FIELDS = ['protocol', 'stream', 'sniffing', 'vless_flow', 'shadowsocks_method', 'block_bittorrent'] as const;

/** PATCH merge: absent fields stay; `stream` given replaces the stream as a whole. */
export async function updateInboundProfile(ctx: DomainContext, id: string, input: UpdateInboundProfileInput): Promise<InboundProfileView> {
  if (isEmptyPatch(input)) return getInboundProfile(ctx, id);
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('inbound_profiles').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('inbound profile', id);
    if (name !== undefined && name !== current.name) {
      const taken = await trx.selectFrom('inbound_profiles').select('id').where('name', '=', name).executeTakeFirst();
      if (taken) throw profileNameTaken();
    }
    const stored = current.stream;
    const merged: ProfileFields = {
      name: name ?? current.name,
      protocol: input.protocol ?? current.protocol,
      stream: input.stream ?? stored,
      sniffing: { ...(current.sniffing as Sniffing), ...stripUndefined(input.sniffing ?? {}) },
      vless_flow: input.vless_flow !== undefined ? input.vless_flow : (current.vless_flow as ProfileFields['vless_flow']),
      shadowsocks_method:
        input.shadowsocks_method !== undefined
          ? input.shadowsocks_method
          : (current.shadowsocks_method as ProfileFields['shadowsocks_method']),
      block_bittorrent: input.block_bittorrent ?? current.block_bittorrent,
    };
    const resolved = await resolveProfile(trx, merged, {
      privateKey: current.reality_private_key_enc !== null ? ctx.secrets.open(current.reality_private_key_enc) : null,
      shortIds: stored.reality?.short_ids ?? null,
    });
    const keyChanged = resolved.realityPrivateKey !== null && resolved.stream.reality?.public_key !== stored.reality?.public_key;
    const row = await trx
      .updateTable('inbound_profiles')
      .set({
        name: merged.name,
        protocol: merged.protocol,
        stream: JSON.stringify(resolved.stream),
        sniffing: JSON.stringify(merged.sniffing),
        vless_flow: merged.vless_flow,
        shadowsocks_method: merged.shadowsocks_method,
        // A new 2022 method (or the first one) gets its own server key; the same method keeps it.
        ...(merged.shadowsocks_method !== current.shadowsocks_method || (merged.shadowsocks_method && !current.shadowsocks_server_key)
          ? { shadowsocks_server_key: newShadowsocksServerKey(merged.shadowsocks_method) }
          : {}),
        block_bittorrent: merged.block_bittorrent,
        // Re-sealed only when the key changed; dropped when the profile leaves REALITY.
        ...(resolved.realityPrivateKey === null
          ? { reality_private_key_enc: null }
          : keyChanged || current.reality_private_key_enc === null
            ? { reality_private_key_enc: ctx.secrets.seal(resolved.realityPrivateKey) }
            : {}),
        certificate_id: resolved.certificateId,
        updated_at: ctx.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'inbound_profiles_name_key')) throw profileNameTaken();
        if (isForeignKeyViolation(err, 'inbound_profiles_certificate_id_fkey')) throw certificateGone();
        throw err;
      });
    // Tags read `<protocol>-<port>`; ports are unique per node, so renamed tags stay unique.
    if (merged.protocol !== current.protocol) {
      await trx
        .updateTable('inbounds')
        .set({ tag: sql`${merged.protocol} || '-' || port` as never })
        .where('profile_id', '=', id)
        .execute();
    }
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateInboundProfileInput] !== undefined);
    // Bump only when what nodes run really differs (a field re-sent with its value is no change).
    const differs = keyChanged || NODE_FIELDS.some((k) => JSON.stringify(row[k]) !== JSON.stringify(current[k]));
    const nodes = differs ? await bumpNodeRevisions(uow, await nodesOfProfile(trx, id)) : [];
    // Subscription links name each server by its node and profile: cached links drop.
    if (row.name !== current.name) uow.subscriptionLinksChanged();
    uow.audit({
      action: 'inbound_profile.updated',
      entity_type: 'inbound_profile',
      entity_id: id,
      details: {
        changed,
        ...(keyChanged ? { reality_key_replaced: true } : {}),
        ...(nodes.length > 0 ? { nodes_bumped: nodes } : {}),
      },
    });
    return inboundProfileView(row);
  });
}
