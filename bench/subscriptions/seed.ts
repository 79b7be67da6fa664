import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { seedClients } from '../common/seed.ts';

/**
 * 10,000 clients and 1,000,000 subscriptions, set-based in SQL (a few seconds on
 * PostgreSQL). Statuses: 70% active, 10% each limited, expired, disabled. Ids are
 * fixed-width so they sort like real time-sortable ids. Every row shares one sealed link
 * token (sealed with the bench's fixed installation key) so views can show a link.
 */
export async function seed(db: Kysely<any>, sealedToken: string, clients = 10_000, subscriptions = 1_000_000): Promise<void> {
  await seedClients(db, clients);
  const now = new Date();
  await sql`
    insert into subscriptions (id, client_id, status, renewal, period_started_at, vless_uuid, vmess_uuid,
      trojan_password, shadowsocks_password, token_hash, token_enc, created_at, updated_at)
    select 'sub_' || lpad(i::text, 26, '0'),
      'cli_' || lpad((1 + i % ${clients})::text, 26, '0'),
      case when i % 10 < 7 then 'active' when i % 10 = 7 then 'limited' when i % 10 = 8 then 'expired' else 'disabled' end,
      'no_reset', ${now}, gen_random_uuid(), gen_random_uuid(), md5(i::text), md5((i * 31)::text),
      md5(i::text) || md5((i * 7)::text), ${sealedToken}, ${now}, ${now}
    from generate_series(1, ${subscriptions}) as i`.execute(db);
  await sql`analyze clients`.execute(db);
  await sql`analyze subscriptions`.execute(db);
}
