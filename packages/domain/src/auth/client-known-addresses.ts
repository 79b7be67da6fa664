import type { Db } from '@svc/db';
import { sha256Hex } from '../shared/secrets.ts';
import { addressKey } from './rate-limit.ts';

/** Addresses remembered per client (the most recent successes); older ones are forgotten. */
export const KNOWN_ADDRESSES_PER_CLIENT = 10;
/** A remembered address stops counting as known after this long without a successful sign-in. */
export const CLIENT_KNOWN_ADDRESS_DAYS = 90;

/**
 * How an address is stored in client_known_addresses: its rate-limit key (IPv6 by /64), hashed,
 * as admin_known_addresses does (admin-login.ts); null when the request had no address.
 */
export function clientAddressHash(ip: string | null | undefined): string | null {
  const key = addressKey(ip);
  return key === null ? null : sha256Hex(`client-known-address:${key}`);
}

/** Since when a success makes an address known. */
export const knownAddressSince = (now: Date): Date => new Date(now.getTime() - CLIENT_KNOWN_ADDRESS_DAYS * 86_400_000);

/**
 * A client signed in from this address (password or magic link: both prove the person), so the
 * account-wide budget for unknown addresses neither counts it nor refuses it
 * (client-password-check.ts). Keeps only the most recent few per client.
 */
export async function rememberClientAddress(trx: Db, clientId: string, ip: string | null | undefined, now: Date): Promise<void> {
  const hash = clientAddressHash(ip);
  if (hash === null) return;
  await trx
    .insertInto('client_known_addresses')
    .values({ client_id: clientId, address_hash: hash, last_success_at: now })
    .onConflict((oc) => oc.columns(['client_id', 'address_hash']).doUpdateSet({ last_success_at: now }))
    .execute();
  await trx
    .deleteFrom('client_known_addresses')
    .where('client_id', '=', clientId)
    .where(
      'address_hash',
      'not in',
      trx
        .selectFrom('client_known_addresses')
        .select('address_hash')
        .where('client_id', '=', clientId)
        .orderBy('last_success_at', 'desc')
        .orderBy('address_hash')
        .limit(KNOWN_ADDRESSES_PER_CLIENT),
    )
    .execute();
}
