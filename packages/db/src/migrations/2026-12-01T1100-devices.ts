import { type Kysely, sql } from 'kysely';

// Issue 36: devices of a subscription (docs/limits.md, docs/subscription-link.md).
// - subscription_devices: devices registered by the HWID headers client apps send with
//   GET /sub/{token} (x-hwid, x-device-os, x-ver-os, x-device-model, User-Agent). The HWID is
//   kept as sent (an identifier the app makes up, not a secret: the link token is the secret),
//   so an operator can match it to what the customer's app shows.
// - subscription_online_addresses: the client addresses on each user's live connections, per
//   node, as the node's last DeviceReport listed them (the whole picture replaces the node's
//   rows). denied_at: the fleet-wide device count refused this address (the same on every
//   node's row of the address); such a row outlives the reports that stop listing it for a
//   short hold, so ending its connections does not let it straight back in.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscription_devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('hwid', 'text', (c) => c.notNull().check(sql`length(hwid) between 1 and 128`))
    .addColumn('os', 'text', (c) => c.check(sql`length(os) <= 64`))
    .addColumn('os_version', 'text', (c) => c.check(sql`length(os_version) <= 64`))
    .addColumn('model', 'text', (c) => c.check(sql`length(model) <= 128`))
    .addColumn('user_agent', 'text', (c) => c.check(sql`length(user_agent) <= 256`))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('subscription_devices_hwid', ['subscription_id', 'hwid'])
    .execute();
  await db.schema
    .createTable('subscription_online_addresses')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull().check(sql`length(address) between 1 and 64`))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('seen_at', 'timestamptz', (c) => c.notNull())
    // False: the node's last report no longer lists it; kept only while refused (the hold).
    .addColumn('listed', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('denied_at', 'timestamptz')
    .addPrimaryKeyConstraint('subscription_online_addresses_pkey', ['subscription_id', 'node_id', 'address'])
    .execute();
  // A node's rows (every report replaces them; DeviceDenials is computed per node).
  await db.schema.createIndex('subscription_online_addresses_node').on('subscription_online_addresses').column('node_id').execute();
}
