import initSqlJs from 'sql.js';

/**
 * A 3x-ui store (x-ui.db) built in the test from the columns its GORM models define
 * (shared/notes/import-sources.md, section 4): `inbounds` with clients in their settings JSON
 * (v2 to v3.0), and optionally the v3.1 `clients` + `client_inbounds` tables with the seeder's
 * mark, as 3x-ui leaves them.
 */
const SCHEMA = `
create table users (id integer primary key, username text, password text);
create table settings (id integer primary key, key text, value text);
create table history_of_seeders (id integer primary key, seeder_name text);
create table inbounds (
  id integer primary key, user_id integer, up integer, down integer, total integer, all_time integer, remark text,
  enable numeric, expiry_time integer, traffic_reset text default 'never', last_traffic_reset_time integer default 0,
  listen text, port integer, protocol text, settings text, stream_settings text, tag text unique, sniffing text, node_id integer
);
create table client_traffics (
  id integer primary key, inbound_id integer, enable numeric, email text unique, up integer, down integer, all_time integer,
  expiry_time integer, total integer, reset integer default 0, last_online integer default 0
);
`;

const CLIENT_TABLES = `
create table clients (
  id integer primary key, email text unique, sub_id text, uuid text, password text, auth text, flow text, security text,
  limit_ip integer, total_gb integer, expiry_time integer, enable numeric, tg_id integer, group_name text, comment text,
  reset integer, created_at integer, updated_at integer
);
create table client_inbounds (client_id integer, inbound_id integer, flow_override text, created_at integer, primary key (client_id, inbound_id));
`;

export interface XuiClient {
  email: string;
  subId?: string;
  id?: string;
  password?: string;
  flow?: string;
  method?: string;
  totalGB?: number;
  expiryTime?: number;
  enable?: boolean;
  reset?: number;
  comment?: string;
  up?: number;
  down?: number;
}

export interface XuiInbound {
  tag: string;
  protocol: string;
  port: number;
  enable?: boolean;
  method?: string;
  streamSettings?: Record<string, unknown>;
  clients: XuiClient[];
}

export async function xuiStore(opts: { inbounds: XuiInbound[]; clientTables?: boolean }): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(SCHEMA);
  db.run("insert into users (username, password) values ('admin', 'x')");
  db.run("insert into settings (key, value) values ('subPath', '/sub/'), ('subPort', '2096')");
  if (opts.clientTables) {
    db.run(CLIENT_TABLES);
    db.run("insert into history_of_seeders (seeder_name) values ('UserPasswordHash'), ('ClientsTable')");
  }
  const clientIds = new Map<string, number>();
  for (const [k, inbound] of opts.inbounds.entries()) {
    const id = k + 1;
    const clients = inbound.clients.map((c) => ({
      id: c.id ?? '',
      password: c.password ?? '',
      flow: c.flow ?? '',
      ...(c.method ? { method: c.method } : {}),
      email: c.email,
      limitIp: 0,
      totalGB: c.totalGB ?? 0,
      expiryTime: c.expiryTime ?? 0,
      enable: c.enable ?? true,
      tgId: 0,
      subId: c.subId ?? '',
      comment: c.comment ?? '',
      reset: c.reset ?? 0,
    }));
    const settings = { clients, ...(inbound.method ? { method: inbound.method } : {}), decryption: 'none' };
    db.run(
      `insert into inbounds (id, user_id, up, down, total, all_time, remark, enable, expiry_time, listen, port, protocol, settings, stream_settings, tag, sniffing)
       values (?, 1, 0, 0, 0, 0, ?, ?, 0, '', ?, ?, ?, ?, ?, '{}')`,
      [
        id,
        inbound.tag,
        inbound.enable === false ? 0 : 1,
        inbound.port,
        inbound.protocol,
        JSON.stringify(settings),
        JSON.stringify(inbound.streamSettings ?? { network: 'tcp', security: 'none' }),
        inbound.tag,
      ],
    );
    for (const c of inbound.clients) {
      db.run(
        'insert into client_traffics (inbound_id, enable, email, up, down, all_time, expiry_time, total) values (?, ?, ?, ?, ?, ?, ?, ?)',
        [id, c.enable === false ? 0 : 1, c.email, c.up ?? 0, c.down ?? 0, (c.up ?? 0) + (c.down ?? 0), c.expiryTime ?? 0, c.totalGB ?? 0],
      );
      if (opts.clientTables) {
        let clientId = clientIds.get(c.email);
        if (!clientId) {
          clientId = clientIds.size + 1;
          clientIds.set(c.email, clientId);
          db.run(
            `insert into clients (id, email, sub_id, uuid, password, flow, total_gb, expiry_time, enable, comment, reset, created_at, updated_at)
             values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            [
              clientId,
              c.email,
              c.subId ?? '',
              c.id ?? '',
              c.password ?? '',
              c.flow ?? '',
              c.totalGB ?? 0,
              c.expiryTime ?? 0,
              c.enable === false ? 0 : 1,
              c.comment ?? '',
              c.reset ?? 0,
              1_700_000_000_000,
              1_700_000_000_000,
            ],
          );
        }
        db.run('insert into client_inbounds (client_id, inbound_id, flow_override, created_at) values (?, ?, ?, ?)', [
          clientId,
          id,
          '',
          1_700_000_000_000,
        ]);
      }
    }
  }
  const bytes = db.export();
  db.close();
  return bytes;
}
