import initSqlJs from 'sql.js';

/**
 * A Marzban 0.8 SQLite store built in the test from the column lists its models define
 * (shared/notes/import-sources.md, section 1: app/db/models.py at v0.8.4): the tables an import
 * reads, with Marzban's types, enum names and naive-UTC timestamps.
 */
const SCHEMA = `
create table alembic_version (version_num varchar(32) not null primary key);
create table admins (id integer primary key, username varchar(34) unique, hashed_password varchar(128), created_at datetime, is_sudo boolean);
create table jwt (id integer primary key, secret_key varchar(64) not null);
create table users (
  id integer primary key, username varchar(34) collate nocase unique, status varchar(8) not null default 'active',
  used_traffic bigint default 0, data_limit bigint, data_limit_reset_strategy varchar(8) not null default 'no_reset',
  expire integer, admin_id integer references admins(id), sub_revoked_at datetime, sub_updated_at datetime,
  sub_last_user_agent varchar(512), created_at datetime, note varchar(500), online_at datetime,
  on_hold_expire_duration bigint, on_hold_timeout datetime, auto_delete_in_days integer, edit_at datetime, last_status_change datetime
);
create table proxies (id integer primary key, user_id integer references users(id), type varchar(11) not null, settings json not null);
create table inbounds (id integer primary key, tag varchar(256) unique);
create table exclude_inbounds_association (proxy_id integer references proxies(id), inbound_tag varchar(256) references inbounds(tag));
create table user_usage_logs (id integer primary key, user_id integer references users(id), used_traffic_at_reset bigint not null, reset_at datetime);
`;

export interface MarzbanUser {
  username: string;
  status?: 'active' | 'disabled' | 'limited' | 'expired' | 'on_hold';
  used_traffic?: number;
  data_limit?: number | null;
  data_limit_reset_strategy?: string;
  expire?: number | null;
  created_at?: string;
  sub_revoked_at?: string | null;
  note?: string | null;
  on_hold_expire_duration?: number | null;
  on_hold_timeout?: string | null;
  proxies?: Array<{ type: 'VMess' | 'VLESS' | 'Trojan' | 'Shadowsocks'; settings: Record<string, unknown> | string; excluded?: string[] }>;
  resets?: number[];
}

export async function marzbanStore(opts: { secret: string; users: MarzbanUser[]; version?: string }): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(SCHEMA);
  db.run('insert into alembic_version values (?)', [opts.version ?? '2b231de97dc3']);
  db.run('insert into jwt (secret_key) values (?)', [opts.secret]);
  db.run("insert into admins (username, hashed_password, created_at, is_sudo) values ('boss', 'x', '2024-01-01 00:00:00', 1)");
  let proxyId = 0;
  for (const [k, u] of opts.users.entries()) {
    const id = k + 1;
    db.run(
      `insert into users (id, username, status, used_traffic, data_limit, data_limit_reset_strategy, expire, admin_id, sub_revoked_at, created_at, note, on_hold_expire_duration, on_hold_timeout)
       values (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
      [
        id,
        u.username,
        u.status ?? 'active',
        u.used_traffic ?? 0,
        u.data_limit ?? null,
        u.data_limit_reset_strategy ?? 'no_reset',
        u.expire ?? null,
        u.sub_revoked_at ?? null,
        u.created_at ?? '2025-01-01 10:00:00.123456',
        u.note ?? null,
        u.on_hold_expire_duration ?? null,
        u.on_hold_timeout ?? null,
      ],
    );
    for (const p of u.proxies ?? []) {
      proxyId += 1;
      db.run('insert into proxies (id, user_id, type, settings) values (?, ?, ?, ?)', [
        proxyId,
        id,
        p.type,
        typeof p.settings === 'string' ? p.settings : JSON.stringify(p.settings),
      ]);
      for (const tag of p.excluded ?? []) {
        db.run('insert or ignore into inbounds (tag) values (?)', [tag]);
        db.run('insert into exclude_inbounds_association values (?, ?)', [proxyId, tag]);
      }
    }
    for (const r of u.resets ?? [])
      db.run('insert into user_usage_logs (user_id, used_traffic_at_reset, reset_at) values (?, ?, ?)', [id, r, '2025-06-01 00:00:00']);
  }
  const bytes = db.export();
  db.close();
  return bytes;
}

/** Marzban's xray_config.json with one inbound of each protocol (and the API inbound every config has). */
export const MARZBAN_XRAY_CONFIG = JSON.stringify({
  log: { loglevel: 'warning' },
  inbounds: [
    { tag: 'API_INBOUND', listen: '127.0.0.1', port: 62789, protocol: 'dokodemo-door', settings: { address: '127.0.0.1' } },
    {
      tag: 'VLESS TCP',
      listen: '0.0.0.0',
      port: 8443,
      protocol: 'vless',
      settings: { clients: [], decryption: 'none' },
      streamSettings: { network: 'tcp' },
    },
    {
      tag: 'VMess WS',
      port: 8080,
      protocol: 'vmess',
      settings: { clients: [] },
      streamSettings: { network: 'ws', wsSettings: { path: '/vmess' } },
    },
    { tag: 'VMess TCP', port: 8081, protocol: 'vmess', settings: { clients: [] } },
    { tag: 'Trojan TCP', port: 8444, protocol: 'trojan', settings: { clients: [] } },
    { tag: 'Shadowsocks TCP', port: 1080, protocol: 'shadowsocks', settings: { clients: [], network: 'tcp,udp' } },
  ],
  outbounds: [{ protocol: 'freedom', tag: 'DIRECT' }],
});
