import type { ImportBatch, ImportedCredentials, ImportedRenewal, ImportedStatus, ImportedUser, ImportNotCarried } from '@svc/domain';
import { ImportSourceError } from '../import-source-error.ts';
import { openSqliteFile, utcTimestamp, wholeNumber } from '../sqlite-file.ts';
import { xrayConfigInbounds } from '../xray-config-inbounds.ts';

/**
 * Marzban 0.8.x's store, read: its SQLite file (users, proxies, exclusions, resets, the token
 * secret) and, when given, its xray_config.json (the inbounds, which Marzban keeps only there).
 * Facts: shared/notes/import-sources.md, section 1. Reads only; the file is never written.
 */
export interface MarzbanSource {
  /** The bytes of db.sqlite3 (bounded by the caller). */
  database: Uint8Array;
  /** The text of xray_config.json; without it the users' inbounds are unknown. */
  xrayConfig?: string | undefined;
}

const REQUIRED = {
  users: ['id', 'username', 'status', 'used_traffic', 'data_limit', 'expire', 'created_at'],
  proxies: ['user_id', 'type', 'settings'],
  jwt: ['secret_key'],
};
const STATUSES = new Set<ImportedStatus>(['active', 'disabled', 'limited', 'expired', 'on_hold']);
const RENEWALS = new Set<ImportedRenewal>(['no_reset', 'day', 'week', 'month', 'year']);
/** proxies.type holds the enum member's name (VMess, VLESS, Trojan, Shadowsocks). */
const PROXY_TYPES: Record<string, keyof ImportedCredentials> = {
  vmess: 'vmess',
  vless: 'vless',
  trojan: 'trojan',
  shadowsocks: 'shadowsocks',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function readMarzban(source: MarzbanSource): Promise<ImportBatch> {
  const db = await openSqliteFile(source.database, 'the Marzban database');
  try {
    for (const [table, columns] of Object.entries(REQUIRED)) {
      if (!db.tables.has(table)) throw new ImportSourceError(`the file has no table "${table}": not a Marzban database`);
      const have = db.columns(table);
      const missing = columns.filter((c) => !have.has(c));
      if (missing.length) throw new ImportSourceError(`table "${table}" lacks ${missing.join(', ')}: not a Marzban 0.8 database`);
    }
    const notCarried: ImportNotCarried[] = [];
    const config = source.xrayConfig === undefined ? null : xrayConfigInbounds(source.xrayConfig, 'xray_config.json');
    if (config) notCarried.push(...config.notCarried);
    else notCarried.push({ what: 'inbounds', why: 'no xray_config.json given: the users are imported without inbounds' });
    const inbounds = config?.inbounds ?? [];

    const secret = String(db.rows('select secret_key from jwt order by id limit 1')[0]?.secret_key ?? '');
    if (!secret) notCarried.push({ what: 'subscription links', why: 'the jwt table holds no secret: old links cannot be verified' });
    const version = db.tables.has('alembic_version')
      ? String(db.rows('select version_num from alembic_version limit 1')[0]?.version_num ?? '') || null
      : null;

    const userColumns = db.columns('users');
    const optional = (c: string) => (userColumns.has(c) ? c : `null as ${c}`);
    const users = db.rows(
      `select id, username, status, used_traffic, data_limit, expire, created_at, ${[
        'data_limit_reset_strategy',
        'note',
        'sub_revoked_at',
        'on_hold_expire_duration',
        'on_hold_timeout',
      ]
        .map(optional)
        .join(', ')} from users order by id`,
    );
    const resets = new Map<number, number>();
    if (db.tables.has('user_usage_logs'))
      for (const r of db.rows('select user_id, sum(used_traffic_at_reset) as total from user_usage_logs group by user_id'))
        resets.set(Number(r.user_id), wholeNumber(r.total) ?? 0);
    const proxies = db.rows('select id, user_id, type, settings from proxies order by id');
    const excluded = new Map<number, Set<string>>();
    if (db.tables.has('exclude_inbounds_association'))
      for (const r of db.rows('select proxy_id, inbound_tag from exclude_inbounds_association')) {
        const set = excluded.get(Number(r.proxy_id)) ?? new Set<string>();
        set.add(String(r.inbound_tag));
        excluded.set(Number(r.proxy_id), set);
      }

    const byUser = new Map<number, Array<Record<string, unknown>>>();
    for (const p of proxies) byUser.set(Number(p.user_id), [...(byUser.get(Number(p.user_id)) ?? []), p]);

    const out: ImportedUser[] = [];
    for (const u of users) {
      const username = String(u.username ?? '');
      const label = `user ${username}`;
      const status = String(u.status ?? '') as ImportedStatus;
      const createdAt = utcTimestamp(u.created_at);
      if (!STATUSES.has(status) || !createdAt) {
        notCarried.push({ what: label, why: !createdAt ? 'no creation time' : `unknown status ${JSON.stringify(u.status)}` });
        continue;
      }
      const credentials: ImportedCredentials = {};
      const tags = new Set<string>();
      for (const p of byUser.get(Number(u.id)) ?? []) {
        const kind = PROXY_TYPES[String(p.type).toLowerCase()];
        const settings = parseSettings(p.settings);
        const problem = kind ? addCredential(credentials, kind, settings) : `unknown proxy type ${JSON.stringify(p.type)}`;
        if (problem) {
          notCarried.push({ what: `${label}: ${String(p.type)}`, why: problem });
          continue;
        }
        const off = excluded.get(Number(p.id)) ?? new Set<string>();
        for (const i of inbounds) if (i.protocol === kind && !off.has(i.tag)) tags.add(i.tag);
      }
      const renewal = String(u.data_limit_reset_strategy ?? 'no_reset') as ImportedRenewal;
      const expire = wholeNumber(u.expire);
      const limit = wholeNumber(u.data_limit);
      const used = Math.max(0, wholeNumber(u.used_traffic) ?? 0);
      out.push({
        key: username.toLowerCase(),
        username,
        linkKey: null,
        email: null,
        status,
        usedBytes: used,
        lifetimeUsedBytes: used + (resets.get(Number(u.id)) ?? 0),
        trafficLimitBytes: limit && limit > 0 ? limit : null,
        renewal: RENEWALS.has(renewal) ? renewal : 'no_reset',
        expiresAt: expire && expire > 0 ? new Date(expire * 1000) : null,
        onHold:
          status === 'on_hold'
            ? { durationSeconds: Math.max(0, wholeNumber(u.on_hold_expire_duration) ?? 0), startsBy: utcTimestamp(u.on_hold_timeout) }
            : null,
        credentials,
        inboundTags: [...tags].sort(),
        note: u.note === null || u.note === undefined || u.note === '' ? null : String(u.note),
        createdAt,
        linksRevokedAt: utcTimestamp(u.sub_revoked_at),
      });
    }
    return { source: 'marzban', sourceVersion: version, linkSecret: secret || null, users: out, inbounds, notCarried };
  } finally {
    db.close();
  }
}

function parseSettings(value: unknown): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(String(value));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Puts the proxy's credential on the user as Marzban holds it; a problem instead when it is not usable. */
function addCredential(c: ImportedCredentials, kind: keyof ImportedCredentials, s: Record<string, unknown> | null): string | null {
  if (!s) return 'its settings are not a JSON object';
  const text = (k: string) => (typeof s[k] === 'string' ? (s[k] as string) : '');
  switch (kind) {
    case 'vless':
    case 'vmess': {
      const uuid = text('id');
      if (!UUID.test(uuid)) return `its id is not a UUID (${JSON.stringify(s.id)})`;
      if (kind === 'vless') c.vless = { uuid: uuid.toLowerCase(), flow: text('flow') };
      else c.vmess = { uuid: uuid.toLowerCase() };
      return null;
    }
    case 'trojan':
      if (!text('password')) return 'no password';
      c.trojan = { password: text('password') };
      return null;
    case 'shadowsocks':
      if (!text('password')) return 'no password';
      c.shadowsocks = { password: text('password'), method: text('method') || 'chacha20-ietf-poly1305' };
      return null;
  }
}
