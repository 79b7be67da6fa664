// Rows seeded straight into the bench schema, set-based: what the admin API would take minutes
// to make. Ids are fixed-width (<prefix>_<26 digits>) so they sort like the product's ids.
import { type Kysely, sql } from 'kysely';

/** Node rows as enrollment leaves them (cert_serial is set once their certificates are signed). */
export async function seedNodes(db: Kysely<any>, count: number): Promise<string[]> {
  const now = new Date();
  await sql`
    insert into nodes (id, name, address, created_at, updated_at)
    select 'nod_' || lpad(i::text, 26, '0'), 'bench-node-' || i, 'node-' || i || '.bench.example', ${now}, ${now}
    from generate_series(1, ${count}) as i`.execute(db);
  return Array.from({ length: count }, (_, i) => `nod_${String(i + 1).padStart(26, '0')}`);
}

/** `count` active clients, ids cli_<26 digits>. */
export async function seedClients(db: Kysely<any>, count: number): Promise<void> {
  const now = new Date();
  await sql`
    insert into clients (id, email, status, email_verified_at, created_at, updated_at)
    select 'cli_' || lpad(i::text, 26, '0'), 'client' || i || '@bench.example', 'active', ${now}, ${now}, ${now}
    from generate_series(1, ${count}) as i`.execute(db);
}

/**
 * `count` active subscriptions, ids sub_<26 digits>, spread over the first `clients` clients,
 * each with `tokenEnc` as its sealed link token; with `groupId`, each granted that access group.
 */
export async function seedSubscriptions(
  db: Kysely<any>,
  opts: {
    count: number;
    clients: number;
    tokenEnc: string;
    groupId?: string;
    /** As sold subscriptions are: each expires 30 to 60 days ahead and has a 100 GiB traffic limit (default: neither). */
    paid?: boolean;
  },
): Promise<void> {
  const now = new Date();
  const expires = opts.paid ? sql`${now}::timestamptz + interval '30 days' + (i % 2592000) * interval '1 second'` : sql`null`;
  const limit = opts.paid ? sql`107374182400` : sql`null`;
  await sql`
    insert into subscriptions (id, client_id, status, traffic_limit_bytes, expires_at, renewal, period_started_at, vless_uuid, vmess_uuid,
      trojan_password, shadowsocks_password, token_hash, token_enc, created_at, updated_at)
    select 'sub_' || lpad(i::text, 26, '0'), 'cli_' || lpad((1 + i % ${opts.clients})::text, 26, '0'), 'active', ${limit}, ${expires}, 'no_reset', ${now},
      gen_random_uuid(), gen_random_uuid(), md5(i::text), md5((i * 31)::text), md5(i::text) || md5((i * 7)::text), ${opts.tokenEnc}, ${now}, ${now}
    from generate_series(1, ${opts.count}) as i`.execute(db);
  if (opts.groupId === undefined) return;
  await sql`
    insert into subscription_access_groups (subscription_id, access_group_id)
    select 'sub_' || lpad(i::text, 26, '0'), ${opts.groupId} from generate_series(1, ${opts.count}) as i`.execute(db);
  await sql`analyze subscriptions, subscription_access_groups, clients`.execute(db);
}

/**
 * What makes node k serve partition k of the usage plan (a node is credited only for the
 * subscriptions it serves): one vless profile, one inbound per node (`inb_<26 digits>`), one
 * access group per node granting it (`grp_<26 digits>`), and subscription i (0-based) granted
 * the group of node floor(i / part), part = floor(subscriptions / nodes); the remainder is
 * granted nothing.
 */
export async function seedServingPartitions(db: Kysely<any>, opts: { nodes: number; subscriptions: number }): Promise<void> {
  const now = new Date();
  const part = Math.floor(opts.subscriptions / opts.nodes);
  await sql`
    insert into inbound_profiles (id, name, protocol, stream, sniffing, created_at, updated_at)
    values ('prf_bench', 'bench-vless', 'vless', ${JSON.stringify({ network: 'tcp', security: 'none' })}::jsonb,
            ${JSON.stringify({ enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false })}::jsonb, ${now}, ${now})`.execute(
    db,
  );
  await sql`
    insert into inbounds (id, node_id, profile_id, tag, port, created_at, updated_at)
    select 'inb_' || lpad(k::text, 26, '0'), 'nod_' || lpad(k::text, 26, '0'), 'prf_bench', 'vless-443', 443, ${now}, ${now}
    from generate_series(1, ${opts.nodes}) as k`.execute(db);
  await sql`
    insert into access_groups (id, name, created_at, updated_at)
    select 'grp_' || lpad(k::text, 26, '0'), 'bench-node-' || k, ${now}, ${now} from generate_series(1, ${opts.nodes}) as k`.execute(db);
  await sql`
    insert into access_group_inbounds (access_group_id, inbound_id)
    select 'grp_' || lpad(k::text, 26, '0'), 'inb_' || lpad(k::text, 26, '0') from generate_series(1, ${opts.nodes}) as k`.execute(db);
  await sql`
    insert into subscription_access_groups (subscription_id, access_group_id)
    select 'sub_' || lpad(i::text, 26, '0'), 'grp_' || lpad((1 + (i - 1) / ${part})::text, 26, '0')
    from generate_series(1, ${part * opts.nodes}) as i`.execute(db);
  await sql`analyze inbounds, access_groups, access_group_inbounds, subscription_access_groups`.execute(db);
}
