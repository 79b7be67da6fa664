import type { ImportBatch, ImportedInbound, ImportedRenewal, ImportedStatus, ImportedUser, ImportNotCarried } from '@svc/domain';
import { ImportSourceError } from '../import-source-error.ts';
import { jsonOf, type SourceRow, type SourceStore } from '../source-store.ts';
import { utcTimestamp, wholeNumber } from '../sqlite-file.ts';

/**
 * Remnawave 2.x and 3.x's store, read (PostgreSQL, its only database): users with their
 * credentials on the row (vless_uuid, trojan_password, ss_password), traffic (on the row before
 * 2.3, in user_traffic since), internal squads to the config-profile inbounds they grant, and
 * those inbounds as Xray JSON (raw_inbound). The user's identity column moved twice (uuid, then
 * t_id, then id in 3.0): it is found, not assumed. Facts: shared/notes/import-sources.md, B.
 */
export interface RemnawaveSource {
  store: SourceStore;
}

const STATUSES: Record<string, ImportedStatus> = { ACTIVE: 'active', DISABLED: 'disabled', LIMITED: 'limited', EXPIRED: 'expired' };
const RENEWALS: Record<string, ImportedRenewal> = {
  NO_RESET: 'no_reset',
  DAY: 'day',
  WEEK: 'week',
  MONTH: 'month',
  MONTH_ROLLING: 'month',
};
const PROTOCOLS = new Set(['vless', 'trojan', 'shadowsocks']);
/** Before 2.7 every Shadowsocks user was served with this method; since, an inbound's own method (this when it names none). */
const DEFAULT_SS_METHOD = 'chacha20-ietf-poly1305';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

export async function readRemnawave(source: RemnawaveSource): Promise<ImportBatch> {
  const db = source.store;
  if (db.dialect !== 'postgres') throw new ImportSourceError('Remnawave keeps its data in PostgreSQL: give its database URL');
  const users = db.columns('users');
  const needed = [
    'short_uuid',
    'username',
    'status',
    'traffic_limit_bytes',
    'traffic_limit_strategy',
    'expire_at',
    'vless_uuid',
    'trojan_password',
    'ss_password',
  ];
  if (users.size === 0) throw new ImportSourceError('the database has no table "users": not a Remnawave database');
  const missing = needed.filter((c) => !users.has(c));
  if (missing.length) throw new ImportSourceError(`table "users" lacks ${missing.join(', ')}: not a Remnawave 2.x or 3.x database`);
  if (!db.tables.has('config_profile_inbounds'))
    throw new ImportSourceError(
      'the database has no table "config_profile_inbounds": a Remnawave before 2.0 (upgrade it first) or not Remnawave',
    );

  const notCarried: ImportNotCarried[] = [];
  const version = db.tables.has('_prisma_migrations')
    ? String(
        (
          await db.rows('select migration_name from _prisma_migrations where finished_at is not null order by migration_name desc limit 1')
        )[0]?.migration_name ?? '',
      ) || null
    : null;

  // The user's identity: id (3.x), t_id (2.3-2.8, the primary key), uuid (2.0-2.2).
  const idColumn = users.has('id') ? 'id' : users.has('t_id') ? 't_id' : 'uuid';
  const trafficTable = db.columns('user_traffic');
  const trafficKey = trafficTable.has('id') ? 'id' : trafficTable.has('t_id') ? 't_id' : null;
  const traffic =
    trafficKey !== null
      ? `t.used_traffic_bytes, t.lifetime_used_traffic_bytes from users u left join user_traffic t on t.${trafficKey} = u.${idColumn}`
      : `u.used_traffic_bytes, u.lifetime_used_traffic_bytes from users u`;
  const optional = (c: string) => (users.has(c) ? `u.${quoteIdent(c)}` : `null as ${c}`);
  const rows = await db.rows(
    `select u.${idColumn}::text as user_key, u.short_uuid, u.username, u.status, u.traffic_limit_bytes, u.traffic_limit_strategy,
            u.expire_at, u.vless_uuid::text as vless_uuid, u.trojan_password, u.ss_password,
            ${['email', 'description', 'created_at', 'sub_revoked_at', 'hwid_device_limit'].map(optional).join(', ')}, ${traffic}
       order by u.created_at, u.${idColumn}`,
  );

  const inbounds = inboundsOf(
    await db.rows('select uuid::text as uuid, tag, type, port, raw_inbound from config_profile_inbounds order by tag'),
    notCarried,
  );
  const tagByUuid = new Map(inbounds.map((i) => [i.uuid, i.inbound]));
  const squadInbounds = new Map<string, string[]>();
  if (db.tables.has('internal_squad_inbounds'))
    for (const r of await db.rows(
      'select internal_squad_uuid::text as squad, inbound_uuid::text as inbound from internal_squad_inbounds',
    )) {
      const tag = tagByUuid.get(String(r.inbound))?.tag;
      if (!tag) continue;
      const list = squadInbounds.get(String(r.squad)) ?? [];
      list.push(tag);
      squadInbounds.set(String(r.squad), list);
    }
  const members = db.columns('internal_squad_members');
  const memberKey = members.has('user_id') ? 'user_id' : members.has('user_uuid') ? 'user_uuid' : null;
  const tagsByUser = new Map<string, Set<string>>();
  if (memberKey)
    for (const r of await db.rows(
      `select internal_squad_uuid::text as squad, ${memberKey}::text as user_key from internal_squad_members`,
    )) {
      const set = tagsByUser.get(String(r.user_key)) ?? new Set<string>();
      for (const tag of squadInbounds.get(String(r.squad)) ?? []) set.add(tag);
      tagsByUser.set(String(r.user_key), set);
    }
  // 2.0-2.2 named members by the user's uuid while 2.3 moved the key to t_id: match either.
  const uuidOf = memberKey === 'user_uuid' && idColumn !== 'uuid' && users.has('uuid');
  const uuids = uuidOf
    ? new Map((await db.rows(`select ${idColumn}::text as k, uuid::text as u from users`)).map((r) => [String(r.k), String(r.u)]))
    : null;

  const byTag = new Map(inbounds.map((i) => [i.inbound.tag, i.inbound]));
  const out: ImportedUser[] = [];
  let deviceLimits = 0;
  for (const r of rows) {
    const key = String(r.user_key);
    const tags = [...(tagsByUser.get(uuids?.get(key) ?? key) ?? [])].sort();
    if ((wholeNumber(r.hwid_device_limit) ?? 0) > 0) deviceLimits++;
    out.push(userOf(r, tags, byTag, notCarried));
  }
  if (deviceLimits > 0)
    notCarried.push({
      what: `${deviceLimits} users: device limit`,
      why: 'HWID device limits are not enforced here yet: imported without them',
    });
  return {
    source: 'remnawave',
    sourceVersion: version,
    linkSecret: null,
    users: out,
    inbounds: inbounds.map((i) => i.inbound),
    notCarried,
  };
}

function userOf(r: SourceRow, tags: string[], byTag: Map<string, ImportedInbound>, notCarried: ImportNotCarried[]): ImportedUser {
  const username = String(r.username);
  const rawStatus = String(r.status ?? 'ACTIVE').toUpperCase();
  const status = STATUSES[rawStatus] ?? 'active';
  if (!STATUSES[rawStatus]) notCarried.push({ what: `user ${username}: status`, why: `unknown status ${rawStatus}: imported as active` });
  const strategy = String(r.traffic_limit_strategy ?? 'NO_RESET').toUpperCase();
  const renewal = RENEWALS[strategy];
  if (!renewal) notCarried.push({ what: `user ${username}: renewal`, why: `unknown reset strategy ${strategy}: imported without resets` });
  const limit = wholeNumber(r.traffic_limit_bytes) ?? 0;
  const used = wholeNumber(r.used_traffic_bytes) ?? 0;
  // The user's Shadowsocks key as its inbounds serve it: a 2022 method takes the password's bytes in base64.
  const methods = [
    ...new Set(
      tags.flatMap((t) => (byTag.get(t)?.protocol === 'shadowsocks' ? [byTag.get(t)?.shadowsocksMethod ?? DEFAULT_SS_METHOD] : [])),
    ),
  ];
  const method = methods[0] ?? DEFAULT_SS_METHOD;
  if (methods.length > 1)
    notCarried.push({
      what: `user ${username}: shadowsocks`,
      why: `served with several methods (${methods.join(', ')}): its key is kept for ${method}`,
    });
  const ssPassword = String(r.ss_password ?? '');
  const note = [r.description, r.email ? `email ${r.email}` : null].filter((x) => typeof x === 'string' && x !== '').join('; ');
  return {
    key: username.toLowerCase(),
    username,
    linkKey: String(r.short_uuid),
    email: typeof r.email === 'string' && r.email.includes('@') ? r.email : null,
    status,
    usedBytes: used,
    lifetimeUsedBytes: Math.max(wholeNumber(r.lifetime_used_traffic_bytes) ?? 0, used),
    trafficLimitBytes: limit > 0 ? limit : null,
    renewal: renewal ?? 'no_reset',
    expiresAt: utcTimestamp(r.expire_at),
    onHold: null,
    credentials: {
      // Remnawave's nodes serve VLESS with vision over TCP with REALITY or TLS.
      vless: { uuid: String(r.vless_uuid), flow: tags.some((t) => visionInbound(byTag.get(t))) ? 'xtls-rprx-vision' : '' },
      trojan: { password: String(r.trojan_password) },
      shadowsocks: {
        password: method.startsWith('2022-') ? Buffer.from(ssPassword, 'utf8').toString('base64') : ssPassword,
        method,
      },
    },
    inboundTags: tags,
    note: note || null,
    createdAt: utcTimestamp(r.created_at) ?? new Date(0),
    linksRevokedAt: utcTimestamp(r.sub_revoked_at),
  };
}

function visionInbound(i: ImportedInbound | undefined): boolean {
  if (!i || i.protocol !== 'vless') return false;
  const network = String(i.streamSettings?.network ?? 'tcp').toLowerCase();
  const security = String(i.streamSettings?.security ?? 'none').toLowerCase();
  return (network === 'tcp' || network === 'raw') && (security === 'reality' || security === 'tls');
}

/** The config profiles' inbounds: each one's Xray JSON as the nodes run it. */
function inboundsOf(rows: SourceRow[], notCarried: ImportNotCarried[]): Array<{ uuid: string; inbound: ImportedInbound }> {
  const out: Array<{ uuid: string; inbound: ImportedInbound }> = [];
  for (const r of rows) {
    const tag = String(r.tag);
    const raw = jsonOf(r.raw_inbound);
    const inbound = isObject(raw) ? raw : {};
    const protocol = String(inbound.protocol ?? r.type ?? '').toLowerCase();
    if (!PROTOCOLS.has(protocol)) {
      notCarried.push({ what: `inbound ${tag}`, why: `protocol ${protocol || '(none)'} is not served here` });
      continue;
    }
    const port = Number(inbound.port ?? r.port);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      notCarried.push({ what: `inbound ${tag}`, why: `its port is not one port (${JSON.stringify(inbound.port ?? r.port)})` });
      continue;
    }
    const settings = isObject(inbound.settings) ? inbound.settings : {};
    const method =
      protocol === 'shadowsocks'
        ? typeof settings.method === 'string' && settings.method !== ''
          ? settings.method
          : DEFAULT_SS_METHOD
        : null;
    out.push({
      uuid: String(r.uuid),
      inbound: {
        tag,
        protocol: protocol as ImportedInbound['protocol'],
        port,
        listen: typeof inbound.listen === 'string' && inbound.listen !== '' ? inbound.listen : null,
        streamSettings: isObject(inbound.streamSettings) ? inbound.streamSettings : null,
        shadowsocksMethod: method,
        shadowsocksServerKey:
          protocol === 'shadowsocks' && typeof settings.password === 'string' && settings.password !== '' ? settings.password : null,
        sniffing: isObject(inbound.sniffing) ? inbound.sniffing : null,
      },
    });
  }
  return out;
}
