import { createHash, generateKeyPairSync } from 'node:crypto';
import { knownMigrations, migrateThrough } from '@svc/db';
import { chainInTag, chainOutTag, compileDesiredState, userEmail } from '@svc/desired-state';
import {
  bindInstallationKey,
  createCa,
  createSealer,
  ensureCertificateAuthority,
  foldUsageInbox,
  getCertificate,
  getDnsProvider,
  getNode,
  getPaymentProvider,
  getSubLinkSettings,
  getSubscription,
  getSubscriptionLink,
  getSubscriptionUsageByNode,
  listAcmeAccounts,
  listAdmins,
  listChains,
  listClients,
  listPayments,
  listPlans,
  listSubscriptions,
  listWebhooks,
  readSubscriptionDocument,
} from '@svc/domain';
import {
  createDomainTestbed,
  createEmptyTestDatabase,
  createFakeClock,
  type DomainTestbed,
  selfSignedCertificate,
  type TestDatabase,
} from '@svc/testkit';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';

/**
 * Upgrades from every earlier schema, with data (issue 18.5). A database is brought up one
 * migration at a time; after each, the rows written at the earlier schemas are checked for
 * what this migration should have given them (defaults, backfills), and rows are written for
 * every table it created or changed, in the shape of that schema (raw SQL through Kysely<any>,
 * frozen like the migrations themselves). At the end today's runtime opens the database as an
 * app's start does, and the domain's own reads answer from those rows.
 *
 * A new migration fails this test until it has a step here: its seed and its check.
 */

type AnyDb = Kysely<any>;
interface Step {
  /** What this migration must have done to the rows seeded before it. */
  check?: (db: AnyDb) => Promise<void>;
  /** Rows for the tables this migration created or changed, in its schema's shape. */
  seed?: (db: AnyDb) => Promise<void>;
}

const KEY = createHash('sha256').update('svc upgrade test installation key').digest();
const sealer = createSealer(KEY);
const T0 = new Date('2026-01-05T10:20:00.000Z');
const hour = (h: number) => new Date(Date.UTC(2026, 0, 5, h));
const id = (prefix: string, n: number) => `${prefix}_01jq${String(n).padStart(22, '0')}`;
const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

const ADMIN = id('adm', 1);
const [NODE_A, NODE_B, NODE_C] = [id('nod', 1), id('nod', 2), id('nod', 3)];
const [VLESS, SS_CHACHA, SS_AES128] = [id('ipr', 1), id('ipr', 2), id('ipr', 3)];
const [IB_VLESS, IB_SS, IB_CHAINED] = [id('inb', 1), id('inb', 2), id('inb', 3)];
const GROUP = id('agr', 1);
const CHAIN = id('chn', 1); // edge-a -> hop-b -> hop-c
const CLIENT = id('cli', 1);
/** Self-registered with a password, email not confirmed yet (2026-11-29T1400 takes the password away). */
const REGISTRANT = id('cli', 2);
const SUB = id('sub', 1);
const SUB_TOKEN = Buffer.alloc(32, 7).toString('base64url');
const PLAN = id('pln', 1);
const PROVIDER = id('ppr', 1);
const [PAYMENT, PAYMENT_EXPIRED] = [id('pay', 1), id('pay', 2)];
const CERT = id('crt', 1);
const ACME_CERT = id('crt', 2);
const DNS = id('dns', 1);
const ACME = id('acm', 1);
const WEBHOOK = id('whk', 1);
const REPLICA = 'rep_upgrade_test';
const SIGNING_KID = id('key', 1);
const UPLOADED = selfSignedCertificate({ cn: 'upgrade.example.com' });

let caCertPem = '';

const put = (db: AnyDb, table: string, rows: Record<string, unknown> | Record<string, unknown>[]) =>
  db.insertInto(table).values(rows).execute();
const one = (db: AnyDb, table: string, where: Record<string, unknown>) => {
  let q = db.selectFrom(table).selectAll();
  for (const [k, v] of Object.entries(where)) q = q.where(k, '=', v);
  return q.executeTakeFirstOrThrow() as Promise<Record<string, any>>;
};

const STEPS: Record<string, Step> = {
  '2026-11-21T0900-foundation': {
    async seed(db) {
      // The installation row as every release wrote it: the key's check, bound on first start.
      await bindInstallationKey(db as never, KEY, createFakeClock(T0));
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      await put(db, 'signing_keys', {
        kid: SIGNING_KID,
        alg: 'EdDSA',
        public_jwk: JSON.stringify(publicKey.export({ format: 'jwk' })),
        private_key_enc: sealer.seal(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()),
        created_at: T0,
      });
      await put(db, 'admins', {
        id: ADMIN,
        email: 'owner@example.com',
        password_hash: null,
        role: 'owner',
        created_at: T0,
        updated_at: T0,
        last_login_at: T0,
      });
      await put(db, 'setup_tokens', { token_hash: sha256Hex('old setup token'), created_at: T0 });
      await put(db, 'sessions', {
        id: id('ses', 1),
        subject_type: 'admin',
        subject_id: ADMIN,
        method: 'password',
        ip: '192.0.2.1',
        user_agent: 'curl/8',
        created_at: T0,
        expires_at: hour(22),
      });
      await put(db, 'refresh_tokens', { token_hash: sha256Hex('refresh'), session_id: id('ses', 1), issued_at: T0, expires_at: hour(22) });
      await put(db, 'audit_log', {
        id: id('aud', 1),
        at: T0,
        actor_type: 'admin',
        actor_id: ADMIN,
        action: 'setup.completed',
        entity_type: 'admin',
        entity_id: ADMIN,
        details: JSON.stringify({ email: 'owner@example.com' }),
      });
    },
  },
  '2026-11-21T1000-fleet': {
    async seed(db) {
      const node = (nid: string, name: string) => ({ id: nid, name, address: `${name}.example.net`, created_at: T0, updated_at: T0 });
      await put(db, 'nodes', [
        {
          ...node(NODE_A, 'edge-a'),
          agent_version: '0.1.0',
          hostname: 'edge-a',
          last_usage_report_id: 1_767_607_200_000_000,
          last_seen_at: hour(11),
        },
        // An apply failure recorded before failures had their own columns (2026-11-28T1700-node-apply-failures).
        { ...node(NODE_B, 'hop-b'), last_apply_error: 'revision 3: main: failed to read config files: unknown protocol: quic' },
        node(NODE_C, 'hop-c'),
      ]);
      await put(db, 'certificates', {
        id: CERT,
        name: 'upgrade',
        kind: 'uploaded',
        status: 'active',
        domains: JSON.stringify(['upgrade.example.com']),
        cert_pem: UPLOADED.cert_pem,
        key_pem_enc: sealer.seal(UPLOADED.key_pem),
        not_before: hour(0),
        not_after: new Date('2036-01-01T00:00:00Z'),
        created_at: T0,
        updated_at: T0,
      });
      const stream = JSON.stringify({ tcp: { accept_proxy_protocol: false }, network: 'tcp', security: 'none' });
      const sniffing = JSON.stringify({ enabled: true, route_only: false, dest_override: ['http', 'tls', 'quic'] });
      const profile = (pid: string, name: string, protocol: string, method: string | null) => ({
        id: pid,
        name,
        protocol,
        stream,
        sniffing,
        shadowsocks_method: method,
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'inbound_profiles', [
        profile(VLESS, 'vless-tcp', 'vless', null),
        // Written before Xray's multi-user Shadowsocks 2022 needed a server key; chacha20 could not serve several users.
        profile(SS_CHACHA, 'ss-chacha', 'shadowsocks', '2022-blake3-chacha20-poly1305'),
        profile(SS_AES128, 'ss-aes128', 'shadowsocks', '2022-blake3-aes-128-gcm'),
      ]);
      await put(db, 'chains', { id: CHAIN, name: 'a-b-c', created_at: T0, updated_at: T0 });
      await put(db, 'chain_hops', [
        { chain_id: CHAIN, position: 0, node_id: NODE_A, port: 30000, secret: sealer.seal('hop-secret-0') },
        { chain_id: CHAIN, position: 1, node_id: NODE_B, port: 30001, secret: sealer.seal('hop-secret-1') },
        { chain_id: CHAIN, position: 2, node_id: NODE_C, port: 30002, secret: sealer.seal('hop-secret-2') },
      ]);
      const inbound = (iid: string, profileId: string, tag: string, port: number, chain: string | null = null) => ({
        id: iid,
        node_id: NODE_A,
        profile_id: profileId,
        tag,
        port,
        host: 'edge-a.example.net',
        chain_id: chain,
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'inbounds', [
        inbound(IB_VLESS, VLESS, 'vless-443', 443),
        inbound(IB_SS, SS_CHACHA, 'ss-8388', 8388),
        inbound(IB_CHAINED, VLESS, 'vless-chained-8443', 8443, CHAIN),
      ]);
      await put(db, 'access_groups', { id: GROUP, name: 'everyone', created_at: T0, updated_at: T0 });
      await put(db, 'access_group_inbounds', [
        { access_group_id: GROUP, inbound_id: IB_VLESS },
        { access_group_id: GROUP, inbound_id: IB_SS },
        { access_group_id: GROUP, inbound_id: IB_CHAINED },
      ]);
      await put(db, 'clients', {
        id: CLIENT,
        email: 'customer@example.com',
        email_verified_at: T0,
        status: 'active',
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'subscriptions', {
        id: SUB,
        client_id: CLIENT,
        status: 'active',
        traffic_limit_bytes: 50_000_000_000,
        used_bytes: 7_000,
        lifetime_used_bytes: 9_000,
        renewal: 'month',
        period_started_at: T0,
        vless_uuid: '6f1c2a3e-0b4d-4e5f-8a9b-1c2d3e4f5a6b',
        vmess_uuid: '7a2d3b4f-1c5e-4f6a-9b0c-2d3e4f5a6b7c',
        trojan_password: 'trojan-password-of-the-upgrade-test',
        shadowsocks_password: Buffer.alloc(32, 9).toString('base64'),
        token_hash: sha256Hex(SUB_TOKEN),
        token_enc: sealer.seal(SUB_TOKEN),
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'subscription_access_groups', { subscription_id: SUB, access_group_id: GROUP });
      // Two hours of this period and one from before it (the period-traffic backfill counts only these two).
      await put(db, 'usage_hourly', [
        { subscription_id: SUB, node_id: NODE_A, hour: hour(9), uplink_bytes: 2_000, downlink_bytes: 0 },
        { subscription_id: SUB, node_id: NODE_A, hour: hour(10), uplink_bytes: 1_000, downlink_bytes: 3_000 },
        { subscription_id: SUB, node_id: NODE_A, hour: hour(11), uplink_bytes: 500, downlink_bytes: 2_500 },
      ]);
      await put(db, 'plans', { id: PLAN, name: 'Monthly', price: 500, currency: 'USD', duration_days: 30, created_at: T0, updated_at: T0 });
      await put(db, 'plan_access_groups', { plan_id: PLAN, access_group_id: GROUP });
      await put(db, 'payment_providers', {
        id: PROVIDER,
        kind: 'manual',
        name: 'Bank transfer',
        enabled: true,
        config: JSON.stringify({ instructions: 'IBAN XX00 0000' }),
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'payments', {
        id: PAYMENT,
        client_id: CLIENT,
        plan_id: PLAN,
        provider_id: PROVIDER,
        subscription_id: SUB,
        amount: 500,
        currency: 'USD',
        status: 'succeeded',
        provider_payment_id: 'manual-1',
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'dns_providers', {
        id: DNS,
        kind: 'cloudflare',
        name: 'cf',
        credentials_enc: sealer.seal(JSON.stringify({ api_token: 'cf-token' })),
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'acme_accounts', {
        id: ACME,
        email: 'acme@example.com',
        directory_url: 'https://acme.example.net/directory',
        created_at: T0,
      });
    },
  },
  '2026-11-21T1100-pki': {
    async seed(db) {
      const ca = await createCa('upgrade', T0);
      caCertPem = ca.certPem;
      await put(db, 'certificate_authority', {
        id: 1,
        cert_pem: ca.certPem,
        key_enc: sealer.seal(ca.keyPem),
        not_after: new Date('2036-01-01T00:00:00Z'),
        created_at: T0,
      });
    },
  },
  '2026-11-21T1200-agent-gateway': {
    async check(db) {
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({ usage_entries_dropped: 0, stream_replica: null, cert_serial: null });
    },
    async seed(db) {
      await put(db, 'gateway_replicas', { id: REPLICA, hostname: 'gw-1', started_at: T0, heartbeat_at: T0 });
      await db
        .updateTable('nodes')
        .set({ cert_serial: 'abc123', cert_not_after: new Date('2027-01-01T00:00:00Z'), usage_entries_dropped: 4 })
        .where('id', '=', NODE_A)
        .execute();
    },
  },
  '2026-11-21T1300-shadowsocks-server-key': {
    async check(db) {
      const chacha = await one(db, 'inbound_profiles', { id: SS_CHACHA });
      expect(chacha.shadowsocks_method).toBe('2022-blake3-aes-256-gcm');
      expect(Buffer.from(chacha.shadowsocks_server_key, 'base64')).toHaveLength(32);
      const aes = await one(db, 'inbound_profiles', { id: SS_AES128 });
      expect(aes.shadowsocks_method).toBe('2022-blake3-aes-128-gcm');
      expect(Buffer.from(aes.shadowsocks_server_key, 'base64')).toHaveLength(16);
      expect((await one(db, 'inbound_profiles', { id: VLESS })).shadowsocks_server_key).toBeNull();
    },
  },
  '2026-11-21T1400-usage-fillfactor': {
    async check(db) {
      const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
        select relname, reloptions from pg_class
         where relname in ('subscriptions', 'usage_hourly') and relnamespace = current_schema()::regnamespace
         order by relname`.execute(db);
      expect(rows).toEqual([
        { relname: 'subscriptions', reloptions: ['fillfactor=80'] },
        { relname: 'usage_hourly', reloptions: ['fillfactor=80'] },
      ]);
      expect(await db.selectFrom('usage_hourly').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).toEqual({ n: 3 });
    },
  },
  '2026-11-21T1500-settings': {
    async seed(db) {
      await put(db, 'settings', {
        key: 'subscription_link',
        value: JSON.stringify({ title: 'Upgrade VPN', update_interval_hours: 6 }),
        updated_at: T0,
      });
    },
  },
  '2026-11-21T1600-period-traffic': {
    async check(db) {
      // Backfilled from the hours of the current period (10:00 and 11:00; 09:00 was before it).
      expect(await one(db, 'subscriptions', { id: SUB })).toMatchObject({ period_uplink_bytes: 1_500, period_downlink_bytes: 5_500 });
    },
  },
  '2026-11-21T1700-admin-sign-in-state': {
    async check(db) {
      expect((await one(db, 'admins', { id: ADMIN })).token_generation).toBe(0);
    },
    async seed(db) {
      await put(db, 'admin_known_addresses', { admin_id: ADMIN, address_hash: sha256Hex(`${ADMIN}192.0.2.1`), last_success_at: T0 });
    },
  },
  '2026-11-21T1710-served-grace': {
    async seed(db) {
      await put(db, 'node_group_grace', { node_id: NODE_B, access_group_id: GROUP, until: hour(12) });
      await put(db, 'subscription_group_grace', { subscription_id: SUB, access_group_id: id('agr', 9), until: hour(12) });
    },
  },
  '2026-11-24T0900-portal-sign-in': {
    async seed(db) {
      await put(db, 'magic_link_tokens', { token_hash: sha256Hex('magic'), client_id: CLIENT, created_at: T0, expires_at: hour(11) });
      await db.updateTable('clients').set({ password_hash: '$argon2id$customer' }).where('id', '=', CLIENT).execute();
      await put(db, 'clients', {
        id: REGISTRANT,
        email: 'registrant@example.com',
        password_hash: '$argon2id$chosen-at-registration',
        email_verified_at: null,
        status: 'active',
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'admin_oauth_identities', {
        provider: 'github',
        provider_user_id: '42',
        admin_id: ADMIN,
        email: 'owner@example.com',
        created_at: T0,
      });
      await put(db, 'client_oauth_identities', { provider: 'google', provider_user_id: '43', client_id: CLIENT, created_at: T0 });
      await put(db, 'oauth_requests', {
        state_hash: sha256Hex('state'),
        surface: 'client',
        provider: 'google',
        code_verifier: 'verifier',
        nonce: 'nonce',
        created_at: T0,
        expires_at: hour(11),
      });
      await put(db, 'events', {
        id: id('evt', 1),
        type: 'client.registered',
        payload: JSON.stringify({ client_id: CLIENT }),
        occurred_at: T0,
        dispatched_at: T0,
      });
    },
  },
  '2026-11-24T1000-webhooks': {
    async seed(db) {
      await put(db, 'webhook_endpoints', {
        id: WEBHOOK,
        url: 'https://hooks.example.net/svc',
        event_types: JSON.stringify(['client.registered']),
        secret_enc: sealer.seal('whsec_upgrade'),
        created_at: T0,
        updated_at: T0,
      });
      await put(db, 'webhook_deliveries', {
        id: id('whd', 1),
        endpoint_id: WEBHOOK,
        event_id: id('evt', 1),
        event_type: 'client.registered',
        body: '{"type":"client.registered"}',
        status: 'succeeded',
        attempts: 1,
        last_response_status: 204,
        delivered_at: T0,
        created_at: T0,
        updated_at: T0,
      });
    },
  },
  '2026-11-24T1100-billing': {
    async check(db) {
      expect((await one(db, 'plans', { id: PLAN })).renewal).toBe('no_reset');
      expect(await one(db, 'payments', { id: PAYMENT })).toMatchObject({
        status: 'succeeded',
        check_attempts: 0,
        applied_at: null,
        request_hash: null,
      });
    },
    async seed(db) {
      await put(db, 'payments', {
        id: PAYMENT_EXPIRED,
        client_id: CLIENT,
        plan_id: PLAN,
        provider_id: PROVIDER,
        amount: 500,
        currency: 'USD',
        status: 'expired',
        idempotency_key: 'idem-1',
        request_hash: sha256Hex('body'),
        expires_at: hour(11),
        created_at: hour(10),
        updated_at: hour(11),
      });
      await put(db, 'payment_events', {
        id: id('pev', 1),
        provider_id: PROVIDER,
        event_id: 'evt-1',
        payment_id: PAYMENT,
        provider_payment_id: 'manual-1',
        status: 'succeeded',
        amount: 500,
        currency: 'USD',
        received_at: T0,
        processed_at: T0,
        outcome: 'applied',
      });
    },
  },
  '2026-11-24T1200-acme-registration': {
    async check(db) {
      expect(await one(db, 'acme_accounts', { id: ACME })).toMatchObject({ eab_enc: null, registration_error: null, registered_at: null });
    },
    async seed(db) {
      await db
        .updateTable('acme_accounts')
        .set({ registered_at: T0, account_url: 'https://acme.example.net/acct/1' })
        .where('id', '=', ACME)
        .execute();
    },
  },
  '2026-11-24T1300-certificate-expiry': {
    async check(db) {
      expect((await one(db, 'certificates', { id: CERT })).expiry_announced_for).toBeNull();
    },
  },
  '2026-11-24T1400-acme-issuance': {
    async check(db) {
      expect(await one(db, 'certificates', { id: CERT })).toMatchObject({ failed_attempts: 0, issuing_since: null, next_attempt_at: null });
    },
    async seed(db) {
      await put(db, 'certificates', {
        id: ACME_CERT,
        name: 'acme',
        kind: 'acme',
        status: 'pending',
        domains: JSON.stringify(['acme.example.com']),
        acme_account_id: ACME,
        dns_provider_id: DNS,
        next_attempt_at: hour(12),
        failed_attempts: 2,
        last_error: 'rate limited',
        created_at: T0,
        updated_at: T0,
      });
    },
  },
  '2026-11-28T1700-node-apply-failures': {
    async check(db) {
      const failed = await one(db, 'nodes', { id: NODE_B });
      expect([Number(failed.apply_failed_revision), failed.apply_failing_since, failed.compiled_engine_version]).toEqual([3, T0, null]);
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({ apply_failed_revision: null, apply_failing_since: null });
    },
    async seed(db) {
      await db.updateTable('nodes').set({ compiled_engine_version: '4.34.0' }).where('id', '=', NODE_C).execute();
    },
  },
  '2026-11-29T1300-oauth-browser-binding': {
    async check(db) {
      // A request started before binding existed binds no browser (its callback is refused).
      expect(await one(db, 'oauth_requests', { state_hash: sha256Hex('state') })).toMatchObject({
        browser_hash: null,
        link_session_id: null,
      });
    },
    async seed(db) {
      await put(db, 'oauth_requests', {
        state_hash: sha256Hex('bound state'),
        surface: 'admin',
        provider: 'github',
        code_verifier: 'verifier',
        nonce: 'nonce',
        link_subject_id: ADMIN,
        link_session_id: id('ses', 1),
        browser_hash: sha256Hex('browser key'),
        created_at: T0,
        expires_at: hour(11),
      });
    },
  },
  '2026-11-29T1400-client-sign-in-hardening': {
    async check(db) {
      // A password never becomes a client's before the email is confirmed: an unconfirmed one's goes.
      expect((await one(db, 'clients', { id: REGISTRANT })).password_hash).toBeNull();
      expect((await one(db, 'clients', { id: CLIENT })).password_hash).toBe('$argon2id$customer');
      expect((await one(db, 'magic_link_tokens', { token_hash: sha256Hex('magic') })).password_hash).toBeNull();
    },
    async seed(db) {
      await put(db, 'magic_link_tokens', {
        token_hash: sha256Hex('confirmation'),
        client_id: REGISTRANT,
        created_at: T0,
        expires_at: hour(11),
        password_hash: '$argon2id$chosen-at-registration',
      });
      await put(db, 'client_known_addresses', {
        client_id: CLIENT,
        address_hash: sha256Hex('client-known-address:192.0.2.1'),
        last_success_at: T0,
      });
    },
  },
  '2026-11-29T1500-registration-browser': {
    async check(db) {
      // A confirmation link issued before binds no browser: it confirms without a password.
      expect(await one(db, 'magic_link_tokens', { token_hash: sha256Hex('confirmation') })).toMatchObject({ browser_hash: null });
    },
    async seed(db) {
      await put(db, 'magic_link_tokens', {
        token_hash: sha256Hex('bound confirmation'),
        client_id: REGISTRANT,
        created_at: T0,
        expires_at: hour(11),
        password_hash: '$argon2id$chosen-in-this-browser',
        browser_hash: sha256Hex('registering browser'),
      });
    },
  },
  '2026-11-29T1600-list-search': {
    async check(db) {
      // Indexes only: the search's prefix and sort indexes are there (the trigram ones where pg_trgm could be created).
      const { rows } = await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(
        db,
      );
      const names = rows.map((r) => r.name);
      for (const index of ['clients_email_prefix', 'subscriptions_id_prefix', 'subscriptions_expiry_order', 'audit_log_action'])
        expect(names).toContain(index);
    },
  },
  '2026-11-29T1700-agent-upgrades': {
    async check(db) {
      // Nodes from before had no upgrade asked.
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({ agent_upgrade_version: null, agent_upgrade_state: null });
    },
    async seed(db) {
      await db
        .updateTable('nodes')
        .set({
          agent_upgrade_version: '0.2.0',
          agent_upgrade_command_id: 'cmd_upgrade',
          agent_upgrade_state: 'failed',
          agent_upgrade_error: 'the file does not match its SHA-256',
          agent_upgrade_requested_at: T0,
          agent_upgrade_finished_at: hour(1),
        })
        .where('id', '=', NODE_B)
        .execute();
    },
  },
  '2026-11-29T1800-plan-description': {
    async check(db) {
      // Plans from before say nothing of what they include.
      expect(await one(db, 'plans', { id: PLAN })).toMatchObject({ description: null });
    },
    async seed(db) {
      await put(db, 'plans', {
        id: id('pln', 2),
        name: 'Described',
        price: 900,
        currency: 'EUR',
        duration_days: 30,
        description: 'Two devices\nServers in Europe',
        created_at: T0,
        updated_at: T0,
      });
    },
  },
  '2026-11-30T0900-imports': {
    async check(db) {
      // Nothing was imported before: the tables start empty.
      expect(await db.selectFrom('import_sources').selectAll().execute()).toEqual([]);
    },
    async seed(db) {
      const source = id('imp', 1);
      await put(db, 'import_sources', {
        id: source,
        kind: 'marzban',
        name: 'marzban',
        link_secret_enc: sealer.seal('a'.repeat(64)),
        source_version: '2b231de97dc3',
        first_imported_at: T0,
        last_imported_at: T0,
      });
      await put(db, 'access_groups', { id: id('agr', 9), name: 'marzban: VLESS TCP', created_at: T0, updated_at: T0 });
      await put(db, 'imported_inbounds', { source_id: source, tag: 'VLESS TCP', access_group_id: id('agr', 9) });
      await put(db, 'imported_users', {
        source_id: source,
        source_key: 'alice',
        username: 'Alice',
        subscription_id: SUB,
        source_created_at: T0,
        imported_at: T0,
      });
    },
  },
  '2026-11-30T1000-start-on-first-use': {
    async check(db) {
      // Subscriptions from before run on their expiry as they did: no term waits for a first use.
      expect(await one(db, 'subscriptions', { id: SUB })).toMatchObject({ starts_on_first_use_seconds: null, start_by: null });
    },
  },
  '2026-11-30T1100-import-link-keys': {
    async check(db) {
      // Marzban's users, imported before, are found by token, not by a key of the link.
      expect(await one(db, 'imported_users', { source_key: 'alice' })).toMatchObject({ link_key: null });
    },
  },
  '2026-11-30T1200-imported-inbound-profiles': {
    async check(db) {
      // Inbounds imported before made only their access group: no profile is claimed for them.
      expect(await one(db, 'imported_inbounds', { tag: 'VLESS TCP' })).toMatchObject({ profile_id: null });
    },
  },
  '2026-11-30T1300-import-jobs': {
    async seed(db) {
      await put(db, 'import_jobs', {
        id: id('imj', 1),
        kind: 'marzban',
        status: 'done',
        options: JSON.stringify({ nodes: [], tls_certificate_id: null, dry_run: false, auth_algorithm: 'xxh128' }),
        source_file: null,
        xray_config: null,
        file_bytes: 4096,
        progress: JSON.stringify({ phase: 'done', done: 1, total: 1 }),
        report: JSON.stringify({ counts: { users_created: 1 } }),
        created_at: T0,
        updated_at: T0,
        finished_at: T0,
      });
    },
  },
  '2026-11-30T1400-api-tokens': {
    async seed(db) {
      await put(db, 'api_tokens', {
        id: id('tok', 1),
        name: 'shop bot',
        admin_id: ADMIN,
        scopes: JSON.stringify(['subscriptions:read']),
        token_hash: 'f'.repeat(64),
        prefix: 'svc_pat_abcd',
        allowed_ips: null,
        expires_at: null,
        created_at: T0,
      });
    },
    async check(db) {
      // Audit entries written before came through no token.
      const entries = await db.selectFrom('audit_log').select('via_token_id').execute();
      expect(entries.every((e) => e.via_token_id === null)).toBe(true);
    },
  },
  '2026-11-30T1500-node-traffic': {
    async check(db) {
      // Every node charged a byte as a byte and had no quota; its totals come from the hourly rows
      // (edge-a's three hours), its period from this month's (none: they are January's).
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({
        traffic_multiplier: '1.0000',
        traffic_quota_bytes: null,
        traffic_quota_renewal: 'month',
        traffic_limited_at: null,
        traffic_raw_bytes: 9_000,
        traffic_charged_bytes: 9_000,
        traffic_period_bytes: 0,
      });
      expect(await one(db, 'nodes', { id: NODE_B })).toMatchObject({ traffic_raw_bytes: 0, traffic_period_bytes: 0 });
      // Hourly rows from before hold no raw bytes: theirs are the charged ones.
      const hours = await db.selectFrom('usage_hourly').select(['raw_uplink_bytes', 'raw_downlink_bytes']).execute();
      expect(hours.every((h) => h.raw_uplink_bytes === null && h.raw_downlink_bytes === null)).toBe(true);
    },
    async seed(db) {
      // A node at half price that carried 4,000 bytes this hour (charged 2,000), over its 1,000-byte quota.
      await db
        .updateTable('nodes')
        .set({
          traffic_multiplier: '0.5',
          traffic_quota_bytes: 1_000,
          traffic_quota_renewal: 'no_reset',
          traffic_period_bytes: 4_000,
          traffic_limited_at: hour(12),
        })
        .where('id', '=', NODE_C)
        .execute();
      await put(db, 'usage_hourly', {
        subscription_id: SUB,
        node_id: NODE_C,
        hour: hour(12),
        uplink_bytes: 500,
        downlink_bytes: 1_500,
        raw_uplink_bytes: 1_000,
        raw_downlink_bytes: 3_000,
      });
    },
  },
  '2026-11-30T1600-event-catalogue': {
    async check(db) {
      // A node seen before counts as announced online (its reconnect after the upgrade raises
      // nothing); one never seen has announced nothing.
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({ presence_announced: 'online' });
      expect(await one(db, 'nodes', { id: NODE_B })).toMatchObject({ presence_announced: null });
    },
    async seed(db) {
      // The uploaded certificate's material on its way to edge-a, at its revision 1.
      await put(db, 'certificate_rollouts', {
        certificate_id: CERT,
        node_id: NODE_A,
        revision: 1,
        not_after: new Date('2036-01-01T00:00:00Z'),
        created_at: T0,
      });
    },
  },
  '2026-11-30T1700-bulk-jobs': {
    async seed(db) {
      // A bulk extend half done: one item applied, one to do, a node gathered for the end.
      await put(db, 'bulk_jobs', {
        id: id('blk', 1),
        target: 'subscriptions',
        action: JSON.stringify({ type: 'extend_expiry', days: 30 }),
        selection: JSON.stringify({ filter: { status: 'active' } }),
        status: 'running',
        total: 2,
        done: 1,
        skipped: 0,
        error: null,
        created_by: ADMIN,
        created_by_token: null,
        created_at: T0,
        updated_at: T0,
        finished_at: null,
      });
      await put(db, 'bulk_job_items', [
        { job_id: id('blk', 1), subject_id: SUB, done_at: T0, skipped: false },
        { job_id: id('blk', 1), subject_id: id('sub', 99), done_at: null, skipped: false },
      ]);
      await put(db, 'bulk_job_nodes', { job_id: id('blk', 1), node_id: NODE_A });
    },
  },
  '2026-12-01T1000-limits': {
    async check(db) {
      // Rows from before limits have none: no device limit, uncapped, and nodes that never said what they enforce.
      expect(await one(db, 'subscriptions', { id: SUB })).toMatchObject({ device_limit: null, upload_bps: null, download_bps: null });
      expect(await one(db, 'plans', { id: PLAN })).toMatchObject({ device_limit: null, upload_bps: null, download_bps: null });
      expect(await one(db, 'nodes', { id: NODE_A })).toMatchObject({ enforcement: null });
      expect(String((await one(db, 'nodes', { id: NODE_A })).last_cutoff_report_id)).toBe('0');
    },
    async seed(db) {
      // edge-a carries a slice of SUB and cut it once on its own.
      await put(db, 'traffic_slices', {
        node_id: NODE_A,
        subscription_id: SUB,
        slice_id: 1,
        slice_bytes: 1_000_000,
        used_bytes: 200_000,
        granted_at: T0,
      });
      await put(db, 'node_cutoffs', {
        node_id: NODE_A,
        subscription_id: SUB,
        report_id: 1,
        reason: 'slice',
        cut_at: T0,
        slice_id: 1,
        slice_used_bytes: 1_000_000,
        recorded_at: T0,
      });
    },
  },
  '2026-12-01T1100-devices': {
    async seed(db) {
      // SUB's phone registered by its HWID headers; edge-a lists two addresses of SUB, one refused.
      await put(db, 'subscription_devices', {
        id: id('dev', 1),
        subscription_id: SUB,
        hwid: 'a1b2c3d4-hwid',
        os: 'iOS',
        os_version: '18.3',
        model: 'iPhone 14 Pro Max',
        user_agent: 'Happ/3.4.1',
        first_seen_at: T0,
        last_seen_at: T0,
      });
      await put(db, 'subscription_online_addresses', [
        { subscription_id: SUB, node_id: NODE_A, address: '198.51.100.1', first_seen_at: T0, seen_at: T0, listed: true, denied_at: null },
        {
          subscription_id: SUB,
          node_id: NODE_A,
          address: '2001:db8:1:2::/64',
          first_seen_at: T0,
          seen_at: T0,
          listed: true,
          denied_at: T0,
        },
      ]);
    },
  },
  '2026-12-01T1200-limits-without-sequences': {
    async check(db) {
      // The node's slice ids go on from the highest the sequence gave it; the cutoff keeps its entry, now position 0 of its report.
      expect(String((await one(db, 'nodes', { id: NODE_A })).last_slice_id)).toBe('1');
      expect(String((await one(db, 'nodes', { id: NODE_B })).last_slice_id)).toBe('0');
      expect(await one(db, 'node_cutoffs', { node_id: NODE_A, report_id: 1 })).toMatchObject({
        entry: 0,
        reason: 'slice',
        subscription_id: SUB,
      });
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from information_schema.sequences where sequence_schema = current_schema()`.execute(db);
      expect(rows[0]?.n).toBe(0);
    },
  },
  '2026-12-02T1000-credits-stay-hot': {
    async check(db) {
      // The index on the live counter is gone; the subscription's counters are untouched.
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_indexes where schemaname = current_schema() and indexname = 'subscriptions_used_order'`.execute(
        db,
      );
      expect(rows[0]?.n).toBe(0);
      // The terms not started yet have their partial index.
      const firstUse = await sql<{ def: string }>`
        select indexdef as def from pg_indexes where schemaname = current_schema() and indexname = 'subscriptions_first_use'`.execute(db);
      expect(firstUse.rows[0]?.def).toContain('WHERE (starts_on_first_use_seconds IS NOT NULL)');
      expect(await one(db, 'subscriptions', { id: SUB })).toMatchObject({ used_bytes: 7_000 });
    },
  },
  '2026-12-02T1100-hourly-rows-without-fk-check': {
    async check(db) {
      // No foreign key checks the hourly rows any more ...
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_constraint
         where conrelid = 'usage_hourly'::regclass and contype = 'f'`.execute(db);
      expect(rows[0]?.n).toBe(0);
      // ... and a deleted subscription still takes its hourly rows with it (the trigger), in
      // the deleting transaction: rolled back here, the rows are all there again.
      const hourly = () =>
        db
          .selectFrom('usage_hourly')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('subscription_id', '=', SUB)
          .executeTakeFirstOrThrow();
      const before = await hourly();
      expect(before.n).toBeGreaterThan(0);
      const rolledBack = new Error('roll back');
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.deleteFrom('subscriptions').where('id', '=', SUB).execute();
          expect(
            await trx
              .selectFrom('usage_hourly')
              .select(sql<number>`count(*)::int`.as('n'))
              .where('subscription_id', '=', SUB)
              .executeTakeFirstOrThrow(),
          ).toEqual({ n: 0 });
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      expect(await hourly()).toEqual(before);
    },
  },
  '2026-12-02T1200-usage-inbox': {
    async check(db) {
      // A new, empty table: nothing staged by the schemas before it.
      expect(await db.selectFrom('usage_inbox').selectAll().execute()).toEqual([]);
    },
    async seed(db) {
      // A report staged, not yet folded, at the time of an upgrade: today's fold credits it.
      await put(db, 'usage_inbox', {
        node_id: NODE_A,
        report_id: 77,
        received_at: T0,
        multiplier: '1',
        entries: 1,
        ids: [SUB],
        uplink: [40],
        downlink: [2],
      });
    },
  },
  '2026-12-02T1300-usage-inbox-parts': {
    async check(db) {
      // The row staged before parts is part 0, folded like any other (readThroughTheDomain).
      expect(
        await db
          .selectFrom('usage_inbox')
          .select(['node_id', sql<string>`report_id::text`.as('report_id'), 'part'])
          .execute(),
      ).toEqual([{ node_id: NODE_A, report_id: '77', part: 0 }]);
      // One row per part of a report: the key holds the part; parts are 0-15.
      const emptyPart = (report_id: number, part: number) =>
        put(db, 'usage_inbox', {
          node_id: NODE_A,
          report_id,
          part,
          received_at: T0,
          multiplier: '1',
          entries: 0,
          ids: [],
          uplink: [],
          downlink: [],
        });
      await emptyPart(77, 3);
      await db.deleteFrom('usage_inbox').where('part', '=', 3).execute();
      await expect(emptyPart(78, 16)).rejects.toThrow(/usage_inbox_part/);
    },
  },
  '2026-12-02T1400-subscription-counters': {
    async check(db) {
      // The counters moved, as they were, into a row of their own; the subscription row holds none.
      expect(await one(db, 'subscription_counters', { subscription_id: SUB })).toMatchObject({
        used_bytes: 7_000,
        period_uplink_bytes: 1_500,
        period_downlink_bytes: 5_500,
        lifetime_used_bytes: 9_000,
      });
      const sub = await one(db, 'subscriptions', { id: SUB });
      for (const moved of ['used_bytes', 'period_uplink_bytes', 'period_downlink_bytes', 'lifetime_used_bytes'])
        expect(sub).not.toHaveProperty(moved);
      // Every subscription has one: an insert (of any kind) adds it at zero, a delete takes it away.
      const rolledBack = new Error('roll back');
      await expect(
        db.transaction().execute(async (trx) => {
          const copy = `${SUB}x`;
          const { id: _id, token_hash: _hash, ...rest } = await one(trx, 'subscriptions', { id: SUB });
          await put(trx, 'subscriptions', { ...rest, id: copy, token_hash: sha256Hex('another token') });
          expect(await one(trx, 'subscription_counters', { subscription_id: copy })).toMatchObject({
            used_bytes: 0,
            period_uplink_bytes: 0,
            period_downlink_bytes: 0,
            lifetime_used_bytes: 0,
          });
          await trx.deleteFrom('subscriptions').where('id', '=', copy).execute();
          expect(await trx.selectFrom('subscription_counters').selectAll().where('subscription_id', '=', copy).execute()).toEqual([]);
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
    },
  },
  '2026-12-02T1500-subscriptions-credit-index': {
    async check(db) {
      // An index, nothing else: the subscription reads as before, and the index covers what the usage credit reads of it.
      expect(await one(db, 'subscriptions', { id: SUB })).toMatchObject({ id: SUB, status: expect.any(String) });
      const { rows } = await sql<{ def: string }>`
        select pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
         where c.relname = 'subscriptions_credit' and c.relnamespace = current_schema()::regnamespace`.execute(db);
      expect(rows[0]?.def).toMatch(/\(id\) INCLUDE \(client_id, renewal, status, traffic_limit_bytes, starts_on_first_use_seconds\)/);
    },
  },
  '2026-12-02T1600-subscription-member-hash': {
    async check(db) {
      // Generated for the rows already there: the bucket from the id, a hash that moves with what a node's config takes from the row.
      const sub = await one(db, 'subscriptions', { id: SUB });
      const { rows } = await sql<{ bucket: number }>`select (hashtext(${SUB}) & 255) as bucket`.execute(db);
      expect(Number(sub.bucket)).toBe(Number(rows[0]?.bucket));
      expect(String(sub.member_hash)).toMatch(/^-?\d+$/);
      const rolledBack = new Error('roll back');
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.updateTable('subscriptions').set({ note: 'a note: nothing a node sees' }).where('id', '=', SUB).execute();
          expect(String((await one(trx, 'subscriptions', { id: SUB })).member_hash)).toBe(String(sub.member_hash));
          // Every column a node's config takes from the row moves it.
          const moves: Array<Record<string, unknown>> = [
            { traffic_limit_bytes: 123_456 },
            { expires_at: new Date('2031-01-01T00:00:00Z') },
            { device_limit: 7 },
            { upload_bps: 64_000 },
            { download_bps: 96_000 },
            { vless_uuid: '22222222-2222-4222-8222-222222222222' },
            { vmess_uuid: '33333333-3333-4333-8333-333333333333' },
            { trojan_password: 'rotated' },
            { shadowsocks_password: 'cm90YXRlZA==' },
          ];
          let before = String(sub.member_hash);
          for (const change of moves) {
            await trx.updateTable('subscriptions').set(change).where('id', '=', SUB).execute();
            const now = String((await one(trx, 'subscriptions', { id: SUB })).member_hash);
            expect(now, JSON.stringify(change)).not.toBe(before);
            before = now;
          }
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
    },
  },
  '2026-12-02T1700-member-digest-index': {
    async check(db) {
      // Indexes, nothing else: the membership and the subscription read as before; the digest's two indexes are there, the group-only one gone.
      expect(await one(db, 'subscription_access_groups', { subscription_id: SUB })).toMatchObject({ access_group_id: GROUP });
      const { rows } = await sql<{ name: string; def: string }>`
        select c.relname as name, pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
         where c.relname in ('subscriptions_member_digest', 'subscription_access_groups_group_member', 'subscription_access_groups_group')
           and c.relnamespace = current_schema()::regnamespace order by c.relname`.execute(db);
      expect(rows.map((r) => r.name)).toEqual(['subscription_access_groups_group_member', 'subscriptions_member_digest']);
      expect(rows[0]?.def).toMatch(/\(access_group_id, subscription_id\)/);
      expect(rows[1]?.def).toMatch(/\(id\) INCLUDE \(status, client_id, bucket, member_hash\)/);
    },
  },
};

/** Tables of the schema with how many rows each holds (kysely's bookkeeping left out). */
async function rowCounts(db: AnyDb): Promise<Record<string, number>> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
     where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'kysely_%'
     order by table_name`.execute(db);
  const counts = sql.join(
    rows.map(({ name }) => sql`select ${name} as name, count(*)::int as n from ${sql.table(name)}`),
    sql` union all `,
  );
  const { rows: counted } = await sql<{ name: string; n: number }>`${counts}`.execute(db);
  return Object.fromEntries(counted.map((r) => [r.name, r.n]));
}

/** Walks every migration with its step, then opens the database with today's runtime and reads through the domain. */
async function upgradeWalk(database: TestDatabase): Promise<void> {
  let bed: DomainTestbed | undefined;
  try {
    bed = await walkAndOpen(database);
    await readThroughTheDomain(bed, database.db as AnyDb);
  } finally {
    await (bed ? bed.close() : database.destroy());
  }
}

async function walkAndOpen(database: TestDatabase): Promise<DomainTestbed> {
  const db = database.db as AnyDb;
  for (const name of knownMigrations()) {
    await migrateThrough(db, name);
    const step = STEPS[name] as Step;
    await step.check?.(db);
    await step.seed?.(db);
    const empty = Object.entries(await rowCounts(db)).filter(([, n]) => n === 0);
    expect(empty, `after ${name}, tables without a seeded row (add them to its step's seed)`).toEqual([]);
  }
  const before = await rowCounts(db);

  // Today's runtime opens the database as every app's start does (migrations first, key bound).
  const bed = await createDomainTestbed({
    database,
    clock: createFakeClock(hour(12)),
    env: { SVC_INSTALLATION_KEY: KEY.toString('base64') },
  });
  try {
    expect(await rowCounts(db)).toEqual(before);
  } catch (err) {
    await bed.close();
    throw err;
  }
  return bed;
}

async function readThroughTheDomain(bed: DomainTestbed, db: AnyDb): Promise<void> {
  {
    const ctx = bed.ctx({ type: 'admin', id: ADMIN, role: 'owner' });

    // Sealed secrets open with the installation key: the token service signs with the seeded key, the CA is the seeded one.
    const { token } = await bed.deps.tokens.signAccess({ sub: ADMIN, scope: 'admin', sid: id('ses', 1), role: 'owner' });
    expect(JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()).kid).toBe(SIGNING_KID);
    expect((await bed.deps.tokens.verifyAccess(token, 'admin')).sub).toBe(ADMIN);
    expect((await ensureCertificateAuthority(bed.deps)).certPem).toBe(caCertPem);

    expect((await listAdmins(ctx, { limit: 10 })).items).toMatchObject([{ id: ADMIN, email: 'owner@example.com', role: 'owner' }]);
    // Rows written before search existed are found by it, and sorted by its keys.
    expect((await listClients(ctx, { limit: 10, q: 'customer@exa' })).items.map((c) => c.id)).toEqual([CLIENT]);
    const found = await listSubscriptions(ctx, { limit: 10, q: 'customer@example', sort: '-expires' });
    expect(found.items.map((x) => x.id)).toContain(SUB);
    expect(found.total_exact).toBe(true);
    expect(await getNode(ctx, NODE_A)).toMatchObject({ name: 'edge-a', agent_version: '0.1.0', connectivity: 'offline' });
    expect(await getNode(ctx, NODE_B)).toMatchObject({
      apply_failed_revision: 3,
      apply_failing_since: T0.toISOString(),
      engine: { family: 'xray' },
    });
    expect((await getNode(ctx, NODE_C)).engine).toMatchObject({ family: 'v2ray', version: '4.34.0', sniffing: ['http', 'tls'] });
    expect((await getNode(ctx, NODE_B)).agent_upgrade).toEqual({
      version: '0.2.0',
      state: 'failed',
      error: 'the file does not match its SHA-256',
      requested_at: T0.toISOString(),
      finished_at: hour(1).toISOString(),
    });
    expect((await getNode(ctx, NODE_A)).agent_upgrade).toBeNull();
    // Node traffic (2026-11-30T1500): totals from the hourly rows, a limited node's state, raw beside charged per node.
    expect(await getNode(ctx, NODE_A)).toMatchObject({
      traffic_multiplier: 1,
      traffic_quota_bytes: null,
      traffic: { total_raw_bytes: 9_000, total_charged_bytes: 9_000, limited_since: null },
    });
    expect(await getNode(ctx, NODE_C)).toMatchObject({
      traffic_multiplier: 0.5,
      traffic_quota_bytes: 1_000,
      traffic_quota_renewal: 'no_reset',
      traffic: { period_bytes: 4_000, resets_at: null, limited_since: hour(12).toISOString() },
    });
    expect(
      (await getSubscriptionUsageByNode(ctx, SUB, hour(0), hour(13))).map((u) => [
        u.node_id,
        u.uplink_bytes + u.downlink_bytes,
        u.raw_uplink_bytes + u.raw_downlink_bytes,
      ]),
    ).toEqual([
      [NODE_A, 9_000, 9_000],
      [NODE_C, 2_000, 4_000],
    ]);

    // The subscription link as GET /sub/{token} reads it: this period's traffic, the three granted inbounds.
    const doc = await readSubscriptionDocument(ctx, SUB_TOKEN);
    expect(doc).toMatchObject({ subscription_id: SUB, status: 'active', upload_bytes: 1_500, download_bytes: 5_500 });
    const servers = [...(doc?.servers ?? [])].sort((a, b) => a.port - b.port);
    expect(servers.map((s) => [s.protocol, s.port, s.address])).toEqual([
      ['vless', 443, 'edge-a.example.net'],
      ['shadowsocks', 8388, 'edge-a.example.net'],
      ['vless', 8443, 'edge-a.example.net'],
    ]);
    const serverKey = (await one(db, 'inbound_profiles', { id: SS_CHACHA })).shadowsocks_server_key as string;
    expect(servers[1]).toMatchObject({ method: '2022-blake3-aes-256-gcm' });
    expect(servers[1]?.password?.startsWith(`${serverKey}:`)).toBe(true);
    expect((await getSubscriptionLink(ctx, SUB)).url).toContain(SUB_TOKEN);
    expect(await getSubscription(ctx, SUB)).toMatchObject({ id: SUB, used_bytes: 7_000, renewal: 'month' });
    expect(await getSubLinkSettings(ctx)).toMatchObject({ title: 'Upgrade VPN', update_interval_hours: 6 });

    // What the gateway sends the nodes, compiled from the same rows (the chain on both sides).
    const edge = await compileDesiredState(bed.deps, NODE_A);
    expect(edge?.revision).toBe(Number((await one(db, 'nodes', { id: NODE_A })).desired_revision));
    const inbounds = (edge?.config.xray?.inbounds ?? []).map((i) => ({ tag: i.tag, port: i.port, users: i.users.map((u) => u.email) }));
    expect(inbounds).toEqual(
      expect.arrayContaining([
        { tag: 'vless-443', port: 443, users: [userEmail(SUB)] },
        { tag: 'ss-8388', port: 8388, users: [userEmail(SUB)] },
        { tag: 'vless-chained-8443', port: 8443, users: [userEmail(SUB)] },
      ]),
    );
    const ssUser = edge?.config.xray?.inbounds.find((i) => i.tag === 'ss-8388')?.users[0]?.shadowsocks;
    expect(ssUser?.password?.startsWith(`${serverKey}:`)).toBe(true);
    expect(edge?.config.xray?.outbounds.map((o) => o.tag)).toContain(chainOutTag(CHAIN));
    const hop = await compileDesiredState(bed.deps, NODE_B);
    expect(hop?.config.xray?.inbounds.map((i) => i.tag)).toContain(chainInTag(CHAIN));

    const chains = (await listChains(ctx, { limit: 10 })).items;
    expect(chains).toMatchObject([
      {
        id: CHAIN,
        hops: [
          { node_id: NODE_A, port: 30000 },
          { node_id: NODE_B, port: 30001 },
          { node_id: NODE_C, port: 30002 },
        ],
      },
    ]);
    expect((await listPlans(ctx, { limit: 10 })).items).toMatchObject([
      { id: PLAN, renewal: 'no_reset', price: 500, description: null },
      { id: id('pln', 2), description: 'Two devices\nServers in Europe' },
    ]);
    const payments = (await listPayments(ctx, { limit: 10 })).items;
    expect(payments.map((p) => [p.id, p.status]).sort()).toEqual([
      [PAYMENT, 'succeeded'],
      [PAYMENT_EXPIRED, 'expired'],
    ]);
    expect(await getPaymentProvider(ctx, PROVIDER)).toMatchObject({ kind: 'manual', config: { instructions: 'IBAN XX00 0000' } });
    expect(await getDnsProvider(ctx, DNS)).toMatchObject({ kind: 'cloudflare', credentials_set: ['api_token'] });
    expect((await listAcmeAccounts(ctx, { limit: 10 })).items).toMatchObject([{ id: ACME, email: 'acme@example.com' }]);
    expect(await getCertificate(ctx, CERT)).toMatchObject({ id: CERT, kind: 'uploaded', domains: ['upgrade.example.com'] });
    expect((await listWebhooks(ctx, { limit: 10 })).items).toMatchObject([{ id: WEBHOOK, url: 'https://hooks.example.net/svc' }]);

    // A report staged before the upgrade (2026-12-02T1200) is credited by today's fold, once.
    expect(await foldUsageInbox(bed.deps)).toMatchObject({ reports: 1, credited: 1, left: 0 });
    expect(await getSubscription(ctx, SUB)).toMatchObject({ used_bytes: 7_042 });
    expect(await foldUsageInbox(bed.deps)).toMatchObject({ reports: 0 });
  }
}

describe('upgrades from every earlier schema, with data', () => {
  it('every migration has a step here (a new one needs its seed and check in this file)', () => {
    const missing = knownMigrations().filter((m) => !(m in STEPS));
    expect(missing, 'migrations without a seed/check step in every-earlier-schema.test.ts: add one for each').toEqual([]);
    expect(Object.keys(STEPS).filter((m) => !knownMigrations().includes(m))).toEqual([]);
  });

  it('rows written at each earlier schema survive every later migration, and today’s domain reads them (PGlite, or PostgreSQL with DATABASE_URL)', async () => {
    await upgradeWalk(await createEmptyTestDatabase());
  });
});
