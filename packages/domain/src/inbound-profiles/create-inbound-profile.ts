import { z } from 'zod';
import { ConflictError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { newShadowsocksServerKey } from '../subscriptions/credentials.ts';
import { DEFAULT_SNIFFING, type InboundProfileView, inboundProfileView, type ProfileFields, resolveProfile } from './profile.ts';
import { ProfileName, Protocol, ShadowsocksMethod, SniffingInput, VlessFlow } from './profile-fields.ts';
import { StreamSettingsInput } from './stream-fields.ts';

/** POST /inbound-profiles, fixtures: a new profile. The rules of the whole profile are resolveProfile's. */
export const CreateInboundProfileInput = z
  .object({
    name: ProfileName,
    protocol: Protocol,
    stream: StreamSettingsInput,
    sniffing: SniffingInput.optional(),
    vless_flow: VlessFlow.nullable().default(null),
    shadowsocks_method: ShadowsocksMethod.nullable().default(null),
    block_bittorrent: z.boolean().default(false).meta({ description: 'needs sniffing.enabled' }),
  })
  .strict()
  .brand<'CreateInboundProfileInput'>();
export type CreateInboundProfileInput = z.output<typeof CreateInboundProfileInput>;

/** The certificate was deleted between the check and the write. */
export const certificateGone = () => new ValidationError('invalid inbound profile', { 'stream.tls.certificate_id': 'no such certificate' });

export const profileNameTaken = () => new ConflictError('an inbound profile with this name exists', { name: 'already taken' });

/** A new profile binds to no node yet, so no revision moves. */
export async function createInboundProfile(ctx: DomainContext, input: CreateInboundProfileInput): Promise<InboundProfileView> {
  const fields: ProfileFields = { ...input, sniffing: { ...DEFAULT_SNIFFING, ...stripUndefined(input.sniffing ?? {}) } };
  return unitOfWork(ctx, (uow) => insertInboundProfile(ctx, uow, fields));
}

/**
 * createInboundProfile inside a unit of work the caller holds. `shadowsocksServerKey`: a 2022
 * server key to keep (an imported inbound's, which its users' links hold); default a fresh one.
 */
export async function insertInboundProfile(
  ctx: DomainContext,
  uow: UnitOfWork,
  fields: ProfileFields,
  keep: { shadowsocksServerKey?: string | null } = {},
): Promise<InboundProfileView> {
  const trx = uow.db;
  const taken = await trx.selectFrom('inbound_profiles').select('id').where('name', '=', fields.name).executeTakeFirst();
  if (taken) throw profileNameTaken();
  const resolved = await resolveProfile(trx, fields, { privateKey: null, shortIds: null });
  const now = ctx.clock.now();
  const row = await trx
    .insertInto('inbound_profiles')
    .values({
      id: newId('ipr', now.getTime()),
      name: fields.name,
      protocol: fields.protocol,
      stream: JSON.stringify(resolved.stream),
      sniffing: JSON.stringify(fields.sniffing),
      vless_flow: fields.vless_flow,
      shadowsocks_method: fields.shadowsocks_method,
      shadowsocks_server_key: keep.shadowsocksServerKey ?? newShadowsocksServerKey(fields.shadowsocks_method),
      block_bittorrent: fields.block_bittorrent,
      reality_private_key_enc: resolved.realityPrivateKey !== null ? ctx.secrets.seal(resolved.realityPrivateKey) : null,
      certificate_id: resolved.certificateId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch((err: unknown) => {
      if (isUniqueViolation(err, 'inbound_profiles_name_key')) throw profileNameTaken();
      if (isForeignKeyViolation(err, 'inbound_profiles_certificate_id_fkey')) throw certificateGone();
      throw err;
    });
  uow.audit({
    action: 'inbound_profile.created',
    entity_type: 'inbound_profile',
    entity_id: row.id,
    details: { name: row.name, protocol: row.protocol, network: resolved.stream.network, security: resolved.stream.security },
  });
  return inboundProfileView(row);
}

export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
