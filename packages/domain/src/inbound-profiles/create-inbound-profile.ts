import type { Protocol } from '@svc/db';
import { ConflictError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { newShadowsocksServerKey } from '../subscriptions/credentials.ts';
import {
  DEFAULT_SNIFFING,
  dedupeSniffing,
  type InboundProfileView,
  inboundProfileView,
  normalizeName,
  type ProfileFields,
  resolveProfile,
  type Sniffing,
} from './profile.ts';
import type { StreamInput } from './stream.ts';

export interface CreateInboundProfileInput {
  name: string;
  protocol: Protocol;
  stream: StreamInput;
  sniffing?: Partial<Sniffing> | undefined;
  vless_flow?: ProfileFields['vless_flow'] | undefined;
  shadowsocks_method?: ProfileFields['shadowsocks_method'] | undefined;
  block_bittorrent?: boolean | undefined;
}

/** The certificate was deleted between the check and the write. */
export const certificateGone = () => new ValidationError('invalid inbound profile', { 'stream.tls.certificate_id': 'no such certificate' });

export const profileNameTaken = () => new ConflictError('an inbound profile with this name exists', { name: 'already taken' });

/** A new profile binds to no node yet, so no revision moves. */
export async function createInboundProfile(ctx: DomainContext, input: CreateInboundProfileInput): Promise<InboundProfileView> {
  const fields: ProfileFields = {
    name: normalizeName(input.name),
    protocol: input.protocol,
    stream: input.stream,
    sniffing: dedupeSniffing({ ...DEFAULT_SNIFFING, ...stripUndefined(input.sniffing ?? {}) }),
    vless_flow: input.vless_flow ?? null,
    shadowsocks_method: input.shadowsocks_method ?? null,
    block_bittorrent: input.block_bittorrent ?? false,
  };
  return unitOfWork(ctx, async (uow) => {
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
        shadowsocks_server_key: newShadowsocksServerKey(fields.shadowsocks_method),
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
  });
}

export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
