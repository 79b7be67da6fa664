import type { ImportBatch, ImportedCredentials, ImportedInbound, ImportedRenewal, ImportedUser, ImportNotCarried } from '@svc/domain';
import { ImportSourceError } from '../import-source-error.ts';
import { openSqliteFile, type SqliteFile, wholeNumber } from '../sqlite-file.ts';

/**
 * 3x-ui's store (x-ui.db, v2 to v3), read: its inbounds (the proxy ones, with their stream
 * settings) and their clients, either inside each inbound's settings JSON (every version) or,
 * once 3x-ui seeded them (v3.1+), in its `clients` and `client_inbounds` tables. A subscriber
 * is a subId: every client with that subId, on every enabled inbound, is one subscription here
 * (a client without a subId is one of its own, by email). Facts: shared/notes/import-sources.md,
 * section 4. Reads only.
 */
export interface XuiSource {
  database: Uint8Array;
}

const PROTOCOLS = new Set(['vless', 'vmess', 'trojan', 'shadowsocks']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 3x-ui's auto-renew period in days, as our renewals. */
const RESET_DAYS: Record<number, ImportedRenewal> = { 0: 'no_reset', 1: 'day', 7: 'week', 30: 'month' };

interface Client {
  email: string;
  subId: string;
  protocol: ImportedInbound['protocol'];
  tag: string;
  inboundEnabled: boolean;
  id: string;
  password: string;
  flow: string;
  method: string;
  totalBytes: number;
  expiryMs: number;
  enable: boolean;
  resetDays: number;
  comment: string;
  createdMs: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const json = (v: unknown): unknown => {
  try {
    return JSON.parse(String(v ?? ''));
  } catch {
    return null;
  }
};

export async function read3xui(source: XuiSource): Promise<ImportBatch> {
  const db = await openSqliteFile(source.database, 'the 3x-ui database');
  try {
    if (!db.tables.has('inbounds')) throw new ImportSourceError('the file has no table "inbounds": not a 3x-ui database');
    const have = db.columns('inbounds');
    const missing = ['id', 'port', 'protocol', 'settings', 'tag', 'enable'].filter((c) => !have.has(c));
    if (missing.length) throw new ImportSourceError(`table "inbounds" lacks ${missing.join(', ')}: not a 3x-ui database`);
    const notCarried: ImportNotCarried[] = [];
    const rows = db.rows(
      `select id, port, listen, protocol, settings, ${have.has('stream_settings') ? 'stream_settings' : 'null as stream_settings'}, ${have.has('sniffing') ? 'sniffing' : 'null as sniffing'}, tag, enable from inbounds order by id`,
    );
    const inbounds: ImportedInbound[] = [];
    const byId = new Map<number, { tag: string; protocol: ImportedInbound['protocol']; enabled: boolean; settings: unknown }>();
    for (const r of rows) {
      const protocol = text(r.protocol).toLowerCase();
      if (!PROTOCOLS.has(protocol)) {
        notCarried.push({ what: `inbound ${text(r.tag)}`, why: `protocol ${protocol || '(none)'} is not served here` });
        continue;
      }
      const settings = json(r.settings);
      const stream = json(r.stream_settings);
      const sniffing = json(r.sniffing);
      const tag = text(r.tag);
      byId.set(Number(r.id), { tag, protocol: protocol as ImportedInbound['protocol'], enabled: Number(r.enable) === 1, settings });
      inbounds.push({
        tag,
        protocol: protocol as ImportedInbound['protocol'],
        port: Number(r.port),
        listen: text(r.listen) || null,
        streamSettings: isObject(stream) ? stream : null,
        shadowsocksMethod: protocol === 'shadowsocks' && isObject(settings) ? text(settings.method) || null : null,
        shadowsocksServerKey: protocol === 'shadowsocks' && isObject(settings) ? text(settings.password) || null : null,
        sniffing: isObject(sniffing) ? sniffing : null,
      });
    }
    const clients = seeded(db) ? clientsOfTables(db, byId) : clientsOfSettings(byId, notCarried);
    const traffic = trafficOf(db);
    const users = usersOf(clients, traffic, notCarried);
    return { source: '3x-ui', sourceVersion: null, linkSecret: null, users, inbounds, notCarried };
  } finally {
    db.close();
  }
}

/** 3x-ui v3.1+ moved its clients into tables, once its seeder ran. */
function seeded(db: SqliteFile): boolean {
  if (!db.tables.has('clients') || !db.tables.has('client_inbounds') || !db.tables.has('history_of_seeders')) return false;
  return db.rows("select 1 as one from history_of_seeders where seeder_name = 'ClientsTable'").length > 0;
}

function clientsOfTables(
  db: SqliteFile,
  inbounds: Map<number, { tag: string; protocol: ImportedInbound['protocol']; enabled: boolean }>,
): Client[] {
  const out: Client[] = [];
  for (const r of db.rows(
    `select c.email, c.sub_id, c.uuid, c.password, c.flow, c.total_gb, c.expiry_time, c.enable, c.reset, c.comment, c.created_at, ci.inbound_id, ci.flow_override
       from clients c join client_inbounds ci on ci.client_id = c.id order by c.id, ci.inbound_id`,
  )) {
    const inbound = inbounds.get(Number(r.inbound_id));
    if (!inbound) continue;
    out.push({
      email: text(r.email),
      subId: text(r.sub_id),
      protocol: inbound.protocol,
      tag: inbound.tag,
      inboundEnabled: inbound.enabled,
      id: text(r.uuid),
      password: text(r.password),
      flow: text(r.flow_override) || text(r.flow),
      method: '',
      totalBytes: wholeNumber(r.total_gb) ?? 0,
      expiryMs: wholeNumber(r.expiry_time) ?? 0,
      enable: Number(r.enable) === 1,
      resetDays: wholeNumber(r.reset) ?? 0,
      comment: text(r.comment),
      createdMs: wholeNumber(r.created_at) ?? 0,
    });
  }
  return out;
}

function clientsOfSettings(
  inbounds: Map<number, { tag: string; protocol: ImportedInbound['protocol']; enabled: boolean; settings: unknown }>,
  notCarried: ImportNotCarried[],
): Client[] {
  const out: Client[] = [];
  for (const inbound of inbounds.values()) {
    if (!isObject(inbound.settings) || !Array.isArray(inbound.settings.clients)) {
      notCarried.push({ what: `inbound ${inbound.tag}`, why: 'its settings hold no clients list' });
      continue;
    }
    for (const c of inbound.settings.clients) {
      if (!isObject(c)) continue;
      out.push({
        email: text(c.email),
        subId: text(c.subId),
        protocol: inbound.protocol,
        tag: inbound.tag,
        inboundEnabled: inbound.enabled,
        id: text(c.id),
        password: text(c.password),
        flow: text(c.flow),
        method: text(c.method),
        totalBytes: wholeNumber(c.totalGB as never) ?? 0,
        expiryMs: wholeNumber(c.expiryTime as never) ?? 0,
        enable: c.enable !== false,
        resetDays: wholeNumber(c.reset as never) ?? 0,
        comment: text(c.comment),
        createdMs: wholeNumber(c.created_at as never) ?? 0,
      });
    }
  }
  return out;
}

/** Usage per client email (client_traffics: this period's up and down; all_time where kept). */
function trafficOf(db: SqliteFile): Map<string, { used: number; lifetime: number }> {
  const out = new Map<string, { used: number; lifetime: number }>();
  if (!db.tables.has('client_traffics')) return out;
  const cols = db.columns('client_traffics');
  for (const r of db.rows(`select email, up, down, ${cols.has('all_time') ? 'all_time' : '0 as all_time'} from client_traffics`)) {
    const used = (wholeNumber(r.up) ?? 0) + (wholeNumber(r.down) ?? 0);
    out.set(text(r.email), { used, lifetime: Math.max(used, wholeNumber(r.all_time) ?? 0) });
  }
  return out;
}

function usersOf(
  clients: Client[],
  traffic: Map<string, { used: number; lifetime: number }>,
  notCarried: ImportNotCarried[],
): ImportedUser[] {
  const groups = new Map<string, Client[]>();
  for (const c of clients) {
    if (!c.email) continue;
    const key = c.subId ? `sub:${c.subId}` : `email:${c.email}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const users: ImportedUser[] = [];
  for (const [key, group] of groups) {
    const first = group[0] as Client;
    const label = `user ${first.subId || first.email}`;
    const credentials: ImportedCredentials = {};
    for (const c of group) {
      const problem = addCredential(credentials, c);
      if (problem) notCarried.push({ what: `${label}: ${c.email} on ${c.tag}`, why: problem });
    }
    const emails = [...new Set(group.map((c) => c.email))];
    const used = emails.reduce((sum, e) => sum + (traffic.get(e)?.used ?? 0), 0);
    const lifetime = emails.reduce((sum, e) => sum + (traffic.get(e)?.lifetime ?? 0), 0);
    const limits = [...new Set(group.map((c) => c.totalBytes))];
    if (limits.length > 1)
      notCarried.push({
        what: `${label}: traffic limit`,
        why: `its clients have different limits (${limits.join(', ')} bytes): the first is kept`,
      });
    const expiries = [...new Set(group.map((c) => c.expiryMs))];
    if (expiries.length > 1) notCarried.push({ what: `${label}: expiry`, why: 'its clients expire at different times: the first is kept' });
    const renewal = RESET_DAYS[first.resetDays];
    if (!renewal)
      notCarried.push({
        what: `${label}: renewal`,
        why: `a reset every ${first.resetDays} days has no counterpart here: imported without resets`,
      });
    const limit = first.totalBytes > 0 ? first.totalBytes : null;
    const expiresAt = first.expiryMs > 0 ? new Date(first.expiryMs) : null;
    const enabled = group.every((c) => c.enable);
    const now = Date.now();
    const status = !enabled
      ? 'disabled'
      : expiresAt && expiresAt.getTime() <= now
        ? 'expired'
        : limit !== null && used >= limit
          ? 'limited'
          : first.expiryMs < 0
            ? 'on_hold'
            : 'active';
    users.push({
      key,
      username: first.subId || first.email,
      linkKey: first.subId || null,
      email: null,
      status,
      usedBytes: used,
      lifetimeUsedBytes: lifetime,
      trafficLimitBytes: limit,
      renewal: renewal ?? 'no_reset',
      expiresAt,
      onHold: first.expiryMs < 0 ? { durationSeconds: Math.round(-first.expiryMs / 1000), startsBy: null } : null,
      credentials,
      inboundTags: [...new Set(group.filter((c) => c.inboundEnabled).map((c) => c.tag))].sort(),
      note: first.comment || null,
      createdAt: new Date(first.createdMs > 0 ? first.createdMs : 0),
      linksRevokedAt: null,
    });
  }
  return users;
}

/** The client's credential on the user; a problem when it is unusable or differs from one already taken for the protocol. */
function addCredential(c: ImportedCredentials, client: Client): string | null {
  switch (client.protocol) {
    case 'vless':
    case 'vmess': {
      if (!UUID.test(client.id)) return `its id is not a UUID (${JSON.stringify(client.id)})`;
      const uuid = client.id.toLowerCase();
      const taken = client.protocol === 'vless' ? c.vless?.uuid : c.vmess?.uuid;
      if (taken && taken !== uuid)
        return `a second ${client.protocol} id for one subscriber (one is kept: ${taken}); this inbound's link changes`;
      if (client.protocol === 'vless') c.vless = { uuid, flow: client.flow };
      else c.vmess = { uuid };
      return null;
    }
    case 'trojan':
      if (!client.password) return 'no password';
      if (c.trojan && c.trojan.password !== client.password)
        return "a second trojan password for one subscriber (the first is kept); this inbound's link changes";
      c.trojan = { password: client.password };
      return null;
    case 'shadowsocks':
      if (!client.password) return 'no password';
      if (c.shadowsocks && c.shadowsocks.password !== client.password)
        return "a second shadowsocks password for one subscriber (the first is kept); this inbound's link changes";
      c.shadowsocks = { password: client.password, method: client.method };
      return null;
  }
}
