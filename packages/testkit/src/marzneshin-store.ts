import initSqlJs from 'sql.js';

/**
 * A Marzneshin 0.7 store built in the test from the column lists its models define
 * (shared/notes/import-sources.md, A.1: app/db/models.py at v0.7.4, alembic head 57eba0a293f2):
 * in SQLite (its default) or PostgreSQL (its migrations' enum types), with enum members stored by
 * name and naive-UTC timestamps, as SQLAlchemy writes them.
 */
export type Dialect = 'sqlite' | 'postgres';

const schema = (d: Dialect) => {
  const pg = d === 'postgres';
  const pk = pg ? 'serial primary key' : 'integer primary key';
  const ts = pg ? 'timestamp' : 'datetime';
  const enumOf = (name: string, len: number) => (pg ? name : `varchar(${len})`);
  return `
${
  pg
    ? `create type userexpirestrategy as enum ('NEVER', 'FIXED_DATE', 'START_ON_FIRST_USE');
create type userdatalimitresetstrategy as enum ('no_reset', 'day', 'week', 'month', 'year');
create type proxytypes as enum ('VMess', 'VLESS', 'Trojan', 'Shadowsocks', 'Shadowsocks2022', 'Hysteria2', 'WireGuard', 'TUIC', 'ShadowTLS');
create type nodestatus as enum ('healthy', 'unhealthy', 'disabled');`
    : ''
}
create table alembic_version (version_num varchar(32) not null primary key);
create table admins (id ${pk}, username varchar(32) unique, hashed_password varchar(128), enabled boolean not null default true,
  all_services_access boolean not null default false, modify_users_access boolean not null default true, created_at ${ts},
  is_sudo boolean, password_reset_at ${ts}, subscription_url_prefix varchar(256) not null default '');
create table nodes (id ${pk}, name varchar(256) unique, connection_backend varchar(32), address varchar(256), port integer,
  xray_version varchar(32), status ${enumOf('nodestatus', 9)} not null, last_status_change ${ts}, message varchar(1024),
  created_at ${ts}, uplink bigint, downlink bigint, usage_coefficient float not null default 1.0);
create table services (id ${pk}, name varchar(64));
create table inbounds (id ${pk}, protocol ${enumOf('proxytypes', 15)}, tag varchar(256) not null, config varchar(512) not null,
  node_id integer references nodes(id), unique (node_id, tag));
create table inbounds_services (inbound_id integer not null references inbounds(id), service_id integer not null references services(id),
  primary key (inbound_id, service_id));
create table users (id ${pk}, username varchar(32) unique, key varchar(64) unique, activated boolean not null default true,
  enabled boolean not null default true, removed boolean not null default false, used_traffic bigint default 0,
  lifetime_used_traffic bigint not null default 0, traffic_reset_at ${ts}, data_limit bigint,
  data_limit_reset_strategy ${enumOf('userdatalimitresetstrategy', 8)} not null default 'no_reset', ip_limit integer not null default -1,
  settings varchar(1024), expire_strategy ${enumOf('userexpirestrategy', 18)} not null default 'NEVER', expire_date ${ts},
  usage_duration bigint, activation_deadline ${ts}, admin_id integer references admins(id), sub_updated_at ${ts},
  sub_last_user_agent varchar(512), sub_revoked_at ${ts}, created_at ${ts}, note varchar(500), online_at ${ts}, edit_at ${ts});
create table users_services (user_id integer not null references users(id), service_id integer not null references services(id),
  primary key (user_id, service_id));
`;
};

export interface MarzneshinInbound {
  tag: string;
  /** The node's summary of its Xray inbound (marznode's config keys). */
  config: {
    protocol: string;
    port: number;
    network?: string | null;
    tls?: string;
    path?: string;
    host?: string[];
    sni?: string[];
    flow?: string;
  };
}

export interface MarzneshinUser {
  username: string | null;
  key: string;
  enabled?: boolean;
  removed?: boolean;
  used_traffic?: number;
  lifetime_used_traffic?: number;
  data_limit?: number | null;
  data_limit_reset_strategy?: 'no_reset' | 'day' | 'week' | 'month' | 'year';
  expire_strategy?: 'NEVER' | 'FIXED_DATE' | 'START_ON_FIRST_USE';
  expire_date?: string | null;
  usage_duration?: number | null;
  activation_deadline?: string | null;
  created_at?: string;
  note?: string | null;
  services?: string[];
}

export interface MarzneshinStoreSpec {
  services: Record<string, string[]>;
  inbounds: MarzneshinInbound[];
  users: MarzneshinUser[];
}

const lit = (d: Dialect, v: unknown): string => {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return d === 'postgres' ? String(v) : v ? '1' : '0';
  if (typeof v === 'number') return String(v);
  return `'${String(v).replaceAll("'", "''")}'`;
};

/** The statements that build the store: its schema, then its rows. */
export function marzneshinStatements(d: Dialect, spec: MarzneshinStoreSpec): string[] {
  const out = [schema(d), `insert into alembic_version values ('57eba0a293f2')`];
  out.push(
    `insert into admins (id, username, hashed_password, created_at, is_sudo) values (1, 'boss', 'x', '2024-01-01 00:00:00', ${lit(d, true)})`,
    `insert into nodes (id, name, address, port, status, created_at) values (1, 'local', '127.0.0.1', 53042, 'healthy', '2024-01-01 00:00:00')`,
  );
  const serviceIds = new Map<string, number>();
  for (const [k, name] of Object.keys(spec.services).entries()) {
    serviceIds.set(name, k + 1);
    out.push(`insert into services (id, name) values (${k + 1}, ${lit(d, name)})`);
  }
  const inboundIds = new Map<string, number>();
  for (const [k, i] of spec.inbounds.entries()) {
    inboundIds.set(i.tag, k + 1);
    const name = { vless: 'VLESS', vmess: 'VMess', trojan: 'Trojan', shadowsocks: 'Shadowsocks' }[i.config.protocol] ?? 'Hysteria2';
    out.push(
      `insert into inbounds (id, protocol, tag, config, node_id) values (${k + 1}, '${name}', ${lit(d, i.tag)}, ${lit(d, JSON.stringify({ tag: i.tag, ...i.config }))}, 1)`,
    );
  }
  for (const [service, tags] of Object.entries(spec.services))
    for (const tag of tags) out.push(`insert into inbounds_services values (${inboundIds.get(tag)}, ${serviceIds.get(service)})`);
  for (const [k, u] of spec.users.entries()) {
    const id = k + 1;
    out.push(
      `insert into users (id, username, key, enabled, removed, used_traffic, lifetime_used_traffic, data_limit, data_limit_reset_strategy,
        expire_strategy, expire_date, usage_duration, activation_deadline, admin_id, created_at, note) values (${[
          id,
          u.username,
          u.key,
          u.enabled ?? true,
          u.removed ?? false,
          u.used_traffic ?? 0,
          u.lifetime_used_traffic ?? u.used_traffic ?? 0,
          u.data_limit ?? null,
          u.data_limit_reset_strategy ?? 'no_reset',
          u.expire_strategy ?? 'NEVER',
          u.expire_date ?? null,
          u.usage_duration ?? null,
          u.activation_deadline ?? null,
          1,
          u.created_at ?? '2025-01-01 10:00:00.123456',
          u.note ?? null,
        ]
          .map((v) => lit(d, v))
          .join(', ')})`,
    );
    for (const s of u.services ?? []) out.push(`insert into users_services values (${id}, ${serviceIds.get(s)})`);
  }
  return out;
}

/** The store as a Marzneshin SQLite file (db.sqlite3). */
export async function marzneshinSqlite(spec: MarzneshinStoreSpec): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  for (const statement of marzneshinStatements('sqlite', spec)) db.run(statement);
  const bytes = db.export();
  db.close();
  return bytes;
}
