import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * `n` copies of a subscription made through the domain (its client, access groups, limits,
 * expiry and note), written set-based in SQL: a bulk action's 10,000 subjects in a second instead
 * of 10,000 use-case calls. Each copy gets ids, credentials and a link-token hash of its own
 * (their values unusable as links: the copies are subjects of bulk changes, not of /sub). Returns
 * the ids, in order.
 */
export async function cloneSubscriptions(db: Kysely<any>, templateId: string, n: number): Promise<string[]> {
  const tag = createHash('sha256').update(`${templateId}:${Date.now()}:${Math.random()}`).digest('hex').slice(0, 10);
  const { rows } = await sql<{ id: string }>`
    insert into subscriptions (id, client_id, status, traffic_limit_bytes, expires_at, renewal, period_started_at,
                               vless_uuid, vmess_uuid, trojan_password, shadowsocks_password, token_hash, token_enc, note, created_at, updated_at)
    select t.id || '_' || ${tag} || lpad(i::text, 6, '0'), t.client_id, t.status, t.traffic_limit_bytes, t.expires_at,
           t.renewal, t.period_started_at, gen_random_uuid(), gen_random_uuid(), md5(${tag} || i::text), md5(${tag} || (i * 31)::text),
           md5(${tag} || i::text) || md5(${tag} || (i * 7)::text), t.token_enc, t.note, t.created_at, t.updated_at
      from subscriptions t, generate_series(1, ${n}) as i
     where t.id = ${templateId}
    returning id`.execute(db);
  await sql`
    insert into subscription_access_groups (subscription_id, access_group_id)
    select c.id, g.access_group_id from subscription_access_groups g, unnest(${rows.map((r) => r.id)}::text[]) as c(id)
     where g.subscription_id = ${templateId}`.execute(db);
  // Their counters rows (added by the insert's trigger) as the template's.
  await sql`
    update subscription_counters c
       set used_bytes = t.used_bytes, period_uplink_bytes = t.period_uplink_bytes,
           period_downlink_bytes = t.period_downlink_bytes, lifetime_used_bytes = t.lifetime_used_bytes
      from subscription_counters t
     where t.subscription_id = ${templateId} and c.subscription_id = any(${rows.map((r) => r.id)}::text[])`.execute(db);
  return rows.map((r) => r.id).sort();
}
