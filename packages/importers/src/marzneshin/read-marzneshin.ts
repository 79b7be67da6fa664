import type { ImportBatch, ImportedInbound, ImportedRenewal, ImportedStatus, ImportedUser, ImportNotCarried } from '@svc/domain';
import { ImportSourceError } from '../import-source-error.ts';
import { flag, jsonOf, type SourceRow, type SourceStore } from '../source-store.ts';
import { utcTimestamp, wholeNumber } from '../sqlite-file.ts';
import { type MarzneshinAuth, marzneshinCredentials } from './marzneshin-credentials.ts';

/**
 * Marzneshin 0.7.x's store, read (SQLite, its default, or PostgreSQL): users, the services that
 * give them inbounds, and the inbounds its nodes reported. Credentials are not stored there:
 * every one is derived from the user's key (marzneshin-credentials.ts), so they are computed
 * here exactly as Marzneshin's nodes compute them. Facts: shared/notes/import-sources.md, A.
 */
export interface MarzneshinSource {
  store: SourceStore;
  /** Marzneshin's AUTH_GENERATION_ALGORITHM (default xxh128). */
  auth?: MarzneshinAuth;
}

const REQUIRED = {
  users: ['id', 'username', 'key', 'enabled', 'removed', 'used_traffic', 'data_limit', 'expire_strategy', 'expire_date', 'created_at'],
  services: ['id', 'name'],
  users_services: ['user_id', 'service_id'],
  inbounds: ['id', 'tag', 'config'],
  inbounds_services: ['inbound_id', 'service_id'],
};
const RENEWALS = new Set<ImportedRenewal>(['no_reset', 'day', 'week', 'month', 'year']);
/** The protocols of inbounds.config (the nodes' words) this control plane serves. */
const PROTOCOLS = new Set(['vless', 'vmess', 'trojan', 'shadowsocks']);
/** Marzneshin's Xray nodes always serve Shadowsocks with this method (the account's default). */
const XRAY_SHADOWSOCKS_METHOD = 'chacha20-ietf-poly1305';
const KEY = /^[0-9a-fA-F]{1,64}$/;

export async function readMarzneshin(source: MarzneshinSource): Promise<ImportBatch> {
  const db = source.store;
  const auth = source.auth ?? 'xxh128';
  for (const [table, columns] of Object.entries(REQUIRED)) {
    if (!db.tables.has(table)) throw new ImportSourceError(`the store has no table "${table}": not a Marzneshin database`);
    const have = db.columns(table);
    const missing = columns.filter((c) => !have.has(c));
    if (missing.length) throw new ImportSourceError(`table "${table}" lacks ${missing.join(', ')}: not a Marzneshin 0.7 database`);
  }
  const notCarried: ImportNotCarried[] = [];
  const version = db.tables.has('alembic_version')
    ? String((await db.rows('select version_num from alembic_version'))[0]?.version_num ?? '') || null
    : null;

  const inbounds = inboundsOf(await db.rows('select id, tag, protocol, config from inbounds order by id'), notCarried);
  const tagsByService = new Map<number, Set<string>>();
  for (const r of await db.rows(
    'select s.inbound_id, s.service_id, i.tag from inbounds_services s join inbounds i on i.id = s.inbound_id',
  )) {
    const set = tagsByService.get(Number(r.service_id)) ?? new Set<string>();
    set.add(String(r.tag));
    tagsByService.set(Number(r.service_id), set);
  }
  const servicesByUser = new Map<number, number[]>();
  for (const r of await db.rows('select user_id, service_id from users_services')) {
    const list = servicesByUser.get(Number(r.user_id)) ?? [];
    list.push(Number(r.service_id));
    servicesByUser.set(Number(r.user_id), list);
  }
  const flowByTag = new Map(inbounds.map((i) => [i.inbound.tag, i.flow]));

  const userColumns = db.columns('users');
  const optional = (c: string) => (userColumns.has(c) ? c : `null as ${c}`);
  const rows = await db.rows(
    `select id, username, key, enabled, removed, used_traffic, data_limit, expire_strategy, expire_date, created_at, ${[
      'lifetime_used_traffic',
      'data_limit_reset_strategy',
      'usage_duration',
      'activation_deadline',
      'sub_revoked_at',
      'note',
    ]
      .map(optional)
      .join(', ')} from users order by id`,
  );
  const users: ImportedUser[] = [];
  for (const r of rows) {
    const user = await userOf(r, auth, servicesByUser, tagsByService, flowByTag, notCarried);
    if (user) users.push(user);
  }
  return {
    source: 'marzneshin',
    sourceVersion: version,
    linkSecret: null,
    users,
    inbounds: inbounds.map((i) => i.inbound),
    notCarried,
  };
}

async function userOf(
  r: SourceRow,
  auth: MarzneshinAuth,
  servicesByUser: Map<number, number[]>,
  tagsByService: Map<number, Set<string>>,
  flowByTag: Map<string, string>,
  notCarried: ImportNotCarried[],
): Promise<ImportedUser | null> {
  const id = Number(r.id);
  // A removed user keeps its row with no name: nothing of it serves there any more.
  if (flag(r.removed) || r.username === null) return null;
  const username = String(r.username);
  const key = String(r.key ?? '');
  if (!KEY.test(key)) {
    notCarried.push({ what: `user ${username}`, why: 'its key is not hex: Marzneshin itself answers none of its links' });
    return null;
  }
  let credentials: Awaited<ReturnType<typeof marzneshinCredentials>>;
  try {
    credentials = await marzneshinCredentials(key, auth);
  } catch (err) {
    notCarried.push({ what: `user ${username}`, why: (err as Error).message });
    return null;
  }
  const tags = [...new Set((servicesByUser.get(id) ?? []).flatMap((s) => [...(tagsByService.get(s) ?? [])]))].sort();
  const flow = tags.map((t) => flowByTag.get(t) ?? '').find((f) => f !== '') ?? '';
  const strategy = String(r.expire_strategy ?? 'NEVER').toUpperCase();
  const usedBytes = wholeNumber(r.used_traffic) ?? 0;
  const limit = wholeNumber(r.data_limit);
  const expiresAt = strategy === 'FIXED_DATE' ? utcTimestamp(r.expire_date) : null;
  const now = Date.now();
  const onHold =
    strategy === 'START_ON_FIRST_USE'
      ? { durationSeconds: wholeNumber(r.usage_duration) ?? 0, startsBy: utcTimestamp(r.activation_deadline) }
      : null;
  let status: ImportedStatus = 'active';
  if (!flag(r.enabled)) status = 'disabled';
  else if (onHold) status = 'on_hold';
  else if (expiresAt && expiresAt.getTime() <= now) status = 'expired';
  else if (limit !== null && limit > 0 && usedBytes >= limit) status = 'limited';
  const renewal = String(r.data_limit_reset_strategy ?? 'no_reset').toLowerCase() as ImportedRenewal;
  if (!RENEWALS.has(renewal)) notCarried.push({ what: `user ${username}: renewal`, why: `unknown reset strategy ${renewal}` });
  return {
    key: username.toLowerCase(),
    username,
    // The link names the user and the key: /sub/{username}/{key}.
    linkKey: `${username}/${key}`,
    email: null,
    status,
    usedBytes,
    lifetimeUsedBytes: Math.max(wholeNumber(r.lifetime_used_traffic) ?? 0, usedBytes),
    trafficLimitBytes: limit !== null && limit > 0 ? limit : null,
    renewal: RENEWALS.has(renewal) ? renewal : 'no_reset',
    expiresAt,
    onHold,
    credentials: {
      vless: { uuid: credentials.uuid, flow },
      vmess: { uuid: credentials.uuid },
      trojan: { password: credentials.password },
      shadowsocks: { password: credentials.password, method: XRAY_SHADOWSOCKS_METHOD },
    },
    inboundTags: tags,
    note: r.note === null || r.note === undefined || r.note === '' ? null : String(r.note),
    createdAt: utcTimestamp(r.created_at) ?? new Date(0),
    linksRevokedAt: utcTimestamp(r.sub_revoked_at),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);

/**
 * The inbounds the nodes reported (inbounds.config, a summary of the node's own Xray inbound),
 * once per tag (every node of a service runs the same tags), in Xray's stream terms so the
 * domain reads them as it reads every source's. REALITY's private key stays on the node: the
 * summary holds the public key only.
 */
function inboundsOf(rows: SourceRow[], notCarried: ImportNotCarried[]): Array<{ inbound: ImportedInbound; flow: string }> {
  const out: Array<{ inbound: ImportedInbound; flow: string }> = [];
  const seen = new Set<string>();
  for (const r of rows) {
    const tag = String(r.tag);
    if (seen.has(tag)) continue;
    const config = jsonOf(r.config);
    if (!isObject(config)) {
      notCarried.push({ what: `inbound ${tag}`, why: 'its configuration is not JSON' });
      continue;
    }
    const protocol = String(config.protocol ?? r.protocol ?? '').toLowerCase();
    if (!PROTOCOLS.has(protocol)) {
      notCarried.push({ what: `inbound ${tag}`, why: `protocol ${protocol || '(none)'} is not served here` });
      continue;
    }
    const port = Number(config.port);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      notCarried.push({ what: `inbound ${tag}`, why: `its port is not one port (${JSON.stringify(config.port)})` });
      continue;
    }
    seen.add(tag);
    const network = typeof config.network === 'string' && config.network !== '' ? config.network : 'tcp';
    const path = typeof config.path === 'string' ? config.path : undefined;
    const host = strings(config.host)[0];
    const security = typeof config.tls === 'string' ? config.tls : 'none';
    const sni = strings(config.sni);
    const stream: Record<string, unknown> = { network, security };
    if (network === 'ws') stream.wsSettings = { ...(path ? { path } : {}), ...(host ? { headers: { Host: host } } : {}) };
    if (network === 'grpc') stream.grpcSettings = { serviceName: path ?? '' };
    if (network === 'httpupgrade') stream.httpupgradeSettings = { ...(path ? { path } : {}), ...(host ? { host } : {}) };
    if (network === 'splithttp' || network === 'xhttp') stream.xhttpSettings = { ...(path ? { path } : {}), ...(host ? { host } : {}) };
    if (network === 'tcp' && typeof config.header_type === 'string' && config.header_type !== '' && config.header_type !== 'none')
      stream.tcpSettings = { header: { type: config.header_type } };
    if (security === 'tls') stream.tlsSettings = { ...(sni[0] ? { serverName: sni[0] } : {}) };
    if (security === 'reality')
      stream.realitySettings = {
        serverNames: sni,
        shortIds: typeof config.sid === 'string' ? [config.sid] : strings(config.sid),
        ...(typeof config.fp === 'string' ? { fingerprint: config.fp } : {}),
      };
    out.push({
      inbound: {
        tag,
        protocol: protocol as ImportedInbound['protocol'],
        port,
        listen: null,
        streamSettings: stream,
        shadowsocksMethod: protocol === 'shadowsocks' ? XRAY_SHADOWSOCKS_METHOD : null,
        shadowsocksServerKey: null,
        sniffing: null,
      },
      flow: typeof config.flow === 'string' ? config.flow : '',
    });
  }
  return out;
}
