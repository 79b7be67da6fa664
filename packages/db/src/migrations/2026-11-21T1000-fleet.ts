import { type Kysely, sql } from 'kysely';

// The fleet, customers and billing records (issue 3). Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  const ts = (c: any) => c.notNull();

  // ---- nodes
  await db.schema
    .createTable('nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('admin_status', 'text', (c) => c.notNull().defaultTo('enabled').check(sql`admin_status in ('enabled', 'disabled')`))
    .addColumn('connectivity', 'text', (c) => c.notNull().defaultTo('offline').check(sql`connectivity in ('online', 'offline')`))
    .addColumn('desired_revision', 'bigint', (c) => c.notNull().defaultTo(1))
    .addColumn('applied_revision', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_apply_error', 'text')
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('agent_version', 'text')
    .addColumn('xray_version', 'text')
    .addColumn('hostname', 'text')
    .addColumn('os', 'text')
    .addColumn('arch', 'text')
    .addColumn('status', 'jsonb')
    .addColumn('last_usage_report_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('enroll_token_hash', 'text', (c) => c.unique())
    .addColumn('enroll_token_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema.createIndex('nodes_connectivity').on('nodes').columns(['connectivity', 'id']).execute();

  // ---- certificates (TLS material handed to nodes; key encrypted)
  await db.schema
    .createTable('certificates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('uploaded', 'acme')`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('domains', 'jsonb', (c) => c.notNull())
    .addColumn('cert_pem', 'text')
    .addColumn('key_pem_enc', 'text')
    .addColumn('issuer', 'text')
    .addColumn('not_before', 'timestamptz')
    .addColumn('not_after', 'timestamptz')
    .addColumn('acme_account_id', 'text')
    .addColumn('dns_provider_id', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema.createIndex('certificates_not_after').on('certificates').columns(['not_after']).execute();

  // ---- inbound profiles (protocol + transport + security; REALITY private key encrypted)
  await db.schema
    .createTable('inbound_profiles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('protocol', 'text', (c) => c.notNull().check(sql`protocol in ('vless', 'vmess', 'trojan', 'shadowsocks')`))
    .addColumn('stream', 'jsonb', (c) => c.notNull())
    .addColumn('sniffing', 'jsonb', (c) => c.notNull())
    .addColumn('vless_flow', 'text')
    .addColumn('shadowsocks_method', 'text')
    .addColumn('block_bittorrent', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('reality_private_key_enc', 'text')
    .addColumn('certificate_id', 'text', (c) => c.references('certificates.id').onDelete('restrict'))
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema.createIndex('inbound_profiles_certificate').on('inbound_profiles').column('certificate_id').execute();

  // ---- chains and their ordered hops
  await db.schema
    .createTable('chains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema
    .createTable('chain_hops')
    .addColumn('chain_id', 'text', (c) => c.notNull().references('chains.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('restrict'))
    .addColumn('port', 'integer', (c) => c.notNull().check(sql`port between 1 and 65535`))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_hops_pk', ['chain_id', 'position'])
    .addUniqueConstraint('chain_hops_node_port', ['node_id', 'port'])
    .execute();
  await db.schema.createIndex('chain_hops_node').on('chain_hops').column('node_id').execute();

  // ---- inbounds: a profile bound to a port of a node
  await db.schema
    .createTable('inbounds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('restrict'))
    .addColumn('profile_id', 'text', (c) => c.notNull().references('inbound_profiles.id').onDelete('restrict'))
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull().check(sql`port between 1 and 65535`))
    .addColumn('listen', 'text')
    .addColumn('host', 'text')
    .addColumn('chain_id', 'text', (c) => c.references('chains.id').onDelete('restrict'))
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .addUniqueConstraint('inbounds_node_tag', ['node_id', 'tag'])
    .addUniqueConstraint('inbounds_node_port', ['node_id', 'port'])
    .execute();
  await db.schema.createIndex('inbounds_profile').on('inbounds').columns(['profile_id', 'id']).execute();
  await db.schema.createIndex('inbounds_chain').on('inbounds').column('chain_id').execute();

  // ---- access groups: sets of inbounds granted together
  await db.schema
    .createTable('access_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema
    .createTable('access_group_inbounds')
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id').onDelete('cascade'))
    .addColumn('inbound_id', 'text', (c) => c.notNull().references('inbounds.id').onDelete('restrict'))
    .addPrimaryKeyConstraint('access_group_inbounds_pk', ['access_group_id', 'inbound_id'])
    .execute();
  await db.schema.createIndex('access_group_inbounds_inbound').on('access_group_inbounds').column('inbound_id').execute();

  // ---- clients (customers)
  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('email_verified_at', 'timestamptz')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'active', 'rejected', 'disabled')`))
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .addCheckConstraint('clients_email_lowercase', sql`email = lower(email)`)
    .execute();
  await db.schema.createIndex('clients_status').on('clients').columns(['status', 'id']).execute();

  // ---- subscriptions: what a client may use, with its own proxy credentials and link token
  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('restrict'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'limited', 'expired', 'disabled')`))
    .addColumn('traffic_limit_bytes', 'bigint')
    .addColumn('used_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lifetime_used_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('renewal', 'text', (c) => c.notNull().defaultTo('no_reset').check(sql`renewal in ('no_reset', 'day', 'week', 'month')`))
    .addColumn('period_started_at', 'timestamptz', ts)
    .addColumn('vless_uuid', 'uuid', (c) => c.notNull())
    .addColumn('vmess_uuid', 'uuid', (c) => c.notNull())
    .addColumn('trojan_password', 'text', (c) => c.notNull())
    .addColumn('shadowsocks_password', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_enc', 'text', (c) => c.notNull())
    .addColumn('credentials_rotated_at', 'timestamptz')
    .addColumn('plan_id', 'text')
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  // Keyset lists: by client, and by status (the 1M-row status filter stays an index range scan).
  await db.schema.createIndex('subscriptions_client').on('subscriptions').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('subscriptions_status').on('subscriptions').columns(['status', 'id']).execute();
  await db.schema
    .createTable('subscription_access_groups')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id').onDelete('restrict'))
    .addPrimaryKeyConstraint('subscription_access_groups_pk', ['subscription_id', 'access_group_id'])
    .execute();
  await db.schema.createIndex('subscription_access_groups_group').on('subscription_access_groups').column('access_group_id').execute();

  // ---- traffic: hourly rows per subscription and node (filled by the agent stream)
  await db.schema
    .createTable('usage_hourly')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('uplink_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('downlink_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_hourly_pk', ['subscription_id', 'hour', 'node_id'])
    .execute();
  await db.schema.createIndex('usage_hourly_hour').on('usage_hourly').column('hour').execute();

  // ---- billing
  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('price', 'bigint', (c) => c.notNull().check(sql`price >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull().check(sql`currency ~ '^[A-Z]{3}$'`))
    .addColumn('duration_days', 'integer', (c) => c.notNull().check(sql`duration_days > 0`))
    .addColumn('traffic_limit_bytes', 'bigint')
    .addColumn('archived', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema
    .createTable('plan_access_groups')
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id').onDelete('restrict'))
    .addPrimaryKeyConstraint('plan_access_groups_pk', ['plan_id', 'access_group_id'])
    .execute();
  await db.schema
    .createTable('payment_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('secrets_enc', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema
    .createTable('payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('restrict'))
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id').onDelete('restrict'))
    .addColumn('provider_id', 'text', (c) => c.notNull().references('payment_providers.id').onDelete('restrict'))
    .addColumn('subscription_id', 'text', (c) => c.references('subscriptions.id').onDelete('set null'))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed', 'canceled', 'refunded')`))
    .addColumn('provider_payment_id', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('checkout_url', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .addUniqueConstraint('payments_provider_payment', ['provider_id', 'provider_payment_id'])
    .execute();
  await db.schema.createIndex('payments_client').on('payments').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('payments_status').on('payments').columns(['status', 'id']).execute();

  // ---- DNS providers and ACME accounts (issuance itself is a later feature)
  await db.schema
    .createTable('dns_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('credentials_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();
  await db.schema
    .createTable('acme_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('directory_url', 'text', (c) => c.notNull())
    .addColumn('account_key_enc', 'text')
    .addColumn('account_url', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addUniqueConstraint('acme_accounts_email_directory', ['email', 'directory_url'])
    .execute();
}
