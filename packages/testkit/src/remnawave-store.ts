/**
 * A Remnawave store built in the test from the column lists its Prisma schema and migrations
 * define (shared/notes/import-sources.md, B.1-B.2), as PostgreSQL statements, in two of its
 * layouts: 3.x (users.id, traffic in user_traffic by id, squad members by user_id) and 2.3-2.8
 * (users.t_id as the key beside uuid, user_traffic by t_id). Timestamps are TIMESTAMP(3) without
 * a zone holding UTC; status and strategy are text.
 */
export type RemnawaveLayout = '3.x' | '2.3';

export interface RemnawaveInbound {
  tag: string;
  /** The inbound object of the config profile (Xray JSON). */
  raw: { protocol: string; port: number; settings?: Record<string, unknown>; streamSettings?: Record<string, unknown>; listen?: string };
}

export interface RemnawaveUser {
  username: string;
  shortUuid: string;
  status?: 'ACTIVE' | 'DISABLED' | 'LIMITED' | 'EXPIRED';
  trafficLimitBytes?: number;
  strategy?: 'NO_RESET' | 'DAY' | 'WEEK' | 'MONTH' | 'MONTH_ROLLING';
  expireAt: string;
  vlessUuid: string;
  trojanPassword: string;
  ssPassword: string;
  usedBytes?: number;
  lifetimeBytes?: number;
  description?: string | null;
  email?: string | null;
  hwidDeviceLimit?: number | null;
  squads?: string[];
}

export interface RemnawaveStoreSpec {
  layout: RemnawaveLayout;
  squads: Record<string, string[]>;
  inbounds: RemnawaveInbound[];
  users: RemnawaveUser[];
}

const lit = (v: unknown): string => {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return `'${String(v).replaceAll("'", "''")}'`;
};
/** A fixed uuid per name (the test's rows refer to each other by them). */
const uuidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function remnawaveStatements(spec: RemnawaveStoreSpec): string[] {
  const v3 = spec.layout === '3.x';
  const key = v3 ? 'id' : 't_id';
  const out = [
    `create table _prisma_migrations (id varchar(36) primary key, checksum varchar(64) not null, finished_at timestamptz,
      migration_name varchar(255) not null, logs text, rolled_back_at timestamptz, started_at timestamptz not null default now(),
      applied_steps_count integer not null default 0)`,
    `create table users (${key} bigserial primary key, ${v3 ? '' : 'uuid uuid not null unique default gen_random_uuid(),'}
      short_uuid text not null unique, username text not null unique, status varchar(10) not null default 'ACTIVE',
      traffic_limit_bytes bigint not null default 0, traffic_limit_strategy text not null default 'NO_RESET',
      expire_at timestamp(3) not null, last_traffic_reset_at timestamp(3), sub_revoked_at timestamp(3),
      trojan_password text not null, vless_uuid uuid not null, ss_password text not null, description text, tag text,
      telegram_id bigint, email text, hwid_device_limit integer, last_triggered_threshold integer not null default 0,
      created_at timestamp(3) not null default now(), updated_at timestamp(3) not null default now())`,
    `create table user_traffic (${key} bigint primary key references users(${key}) on delete cascade,
      used_traffic_bytes bigint not null default 0, lifetime_used_traffic_bytes bigint not null default 0,
      online_at timestamp(3), last_connected_node_uuid uuid, first_connected_at timestamp(3))`,
    `create table config_profiles (uuid uuid primary key default gen_random_uuid(), name text not null unique, config jsonb not null,
      created_at timestamp(3) not null default now(), updated_at timestamp(3) not null default now())`,
    `create table config_profile_inbounds (uuid uuid primary key default gen_random_uuid(), profile_uuid uuid not null references config_profiles(uuid) on delete cascade,
      tag text not null unique, type text not null, network text, security text, port integer, raw_inbound jsonb)`,
    `create table internal_squads (uuid uuid primary key default gen_random_uuid(), name text not null unique,
      created_at timestamp(3) not null default now(), updated_at timestamp(3) not null default now())`,
    `create table internal_squad_members (internal_squad_uuid uuid not null references internal_squads(uuid) on delete cascade,
      user_id bigint not null references users(${key}) on delete cascade, primary key (internal_squad_uuid, user_id))`,
    `create table internal_squad_inbounds (internal_squad_uuid uuid not null references internal_squads(uuid) on delete cascade,
      inbound_uuid uuid not null references config_profile_inbounds(uuid) on delete cascade, primary key (internal_squad_uuid, inbound_uuid))`,
    `insert into _prisma_migrations (id, checksum, finished_at, migration_name) values
      ('1', 'x', now(), '20250619032009_add_squads_and_config_profiles_drop_old_tables'),
      ('2', 'x', now(), ${lit(v3 ? '20260720132335_drop_user_uuid' : '20251202213233_change_uuid_to_id_in_is_memers')})`,
    `insert into config_profiles (uuid, name, config) values (${lit(uuidOf(1))}, 'Default', ${lit(JSON.stringify({ inbounds: spec.inbounds.map((i) => ({ tag: i.tag, ...i.raw })) }))})`,
  ];
  const inboundUuid = new Map<string, string>();
  for (const [k, i] of spec.inbounds.entries()) {
    const uuid = uuidOf(100 + k);
    inboundUuid.set(i.tag, uuid);
    const stream = i.raw.streamSettings ?? {};
    out.push(
      `insert into config_profile_inbounds (uuid, profile_uuid, tag, type, network, security, port, raw_inbound) values (${[
        uuid,
        uuidOf(1),
        i.tag,
        i.raw.protocol,
        stream.network ?? null,
        stream.security ?? null,
        i.raw.port,
        JSON.stringify({ tag: i.tag, ...i.raw }),
      ]
        .map(lit)
        .join(', ')})`,
    );
  }
  const squadUuid = new Map<string, string>();
  for (const [k, [name, tags]] of Object.entries(spec.squads).entries()) {
    const uuid = uuidOf(200 + k);
    squadUuid.set(name, uuid);
    out.push(`insert into internal_squads (uuid, name) values (${lit(uuid)}, ${lit(name)})`);
    for (const tag of tags) out.push(`insert into internal_squad_inbounds values (${lit(uuid)}, ${lit(inboundUuid.get(tag))})`);
  }
  for (const [k, u] of spec.users.entries()) {
    const id = k + 1;
    out.push(
      `insert into users (${key}, short_uuid, username, status, traffic_limit_bytes, traffic_limit_strategy, expire_at, trojan_password, vless_uuid,
        ss_password, description, email, hwid_device_limit, created_at) values (${[
          id,
          u.shortUuid,
          u.username,
          u.status ?? 'ACTIVE',
          u.trafficLimitBytes ?? 0,
          u.strategy ?? 'NO_RESET',
          u.expireAt,
          u.trojanPassword,
          u.vlessUuid,
          u.ssPassword,
          u.description ?? null,
          u.email ?? null,
          u.hwidDeviceLimit ?? null,
          '2025-03-04 05:06:07.890',
        ]
          .map(lit)
          .join(', ')})`,
      `insert into user_traffic (${key}, used_traffic_bytes, lifetime_used_traffic_bytes) values (${id}, ${u.usedBytes ?? 0}, ${u.lifetimeBytes ?? u.usedBytes ?? 0})`,
    );
    for (const squad of u.squads ?? []) out.push(`insert into internal_squad_members values (${lit(squadUuid.get(squad))}, ${id})`);
  }
  return out;
}
