import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

// Shadowsocks 2022 with several users: Xray needs one server key per inbound, which every
// user's password carries as `<server key>:<user key>`. Frozen in time: Kysely<any>.
const KEY_BYTES: Record<string, number> = { '2022-blake3-aes-128-gcm': 16, '2022-blake3-aes-256-gcm': 32 };

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inbound_profiles').addColumn('shadowsocks_server_key', 'text').execute();
  const rows = await db
    .selectFrom('inbound_profiles')
    .select(['id', 'shadowsocks_method'])
    .where('shadowsocks_method', 'like', '2022-%')
    .execute();
  for (const r of rows) {
    // Xray serves several 2022 users only with the AES methods; chacha20 profiles move to aes-256.
    const method = KEY_BYTES[r.shadowsocks_method] ? r.shadowsocks_method : '2022-blake3-aes-256-gcm';
    await db
      .updateTable('inbound_profiles')
      .set({ shadowsocks_method: method, shadowsocks_server_key: randomBytes(KEY_BYTES[method] as number).toString('base64') })
      .where('id', '=', r.id)
      .execute();
  }
}
