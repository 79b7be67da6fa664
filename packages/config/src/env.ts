/**
 * Environment variables -> the config file's shape. The only place `process.env` is read
 * (apps pass `process.env` in; tests pass their own object).
 */
type Env = Record<string, string | undefined>;
type Tree = Record<string, unknown>;

export class ConfigInputError extends Error {}

function bool(name: string, v: string): boolean {
  const s = v.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off'].includes(s)) return false;
  throw new ConfigInputError(`${name}: expected true or false, got "${v}"`);
}

function int(name: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw new ConfigInputError(`${name}: expected an integer, got "${v}"`);
  return Number(v);
}

/** Comma-separated, blanks dropped: "a.example, 10.0.0.1" -> ['a.example', '10.0.0.1']. */
function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A list variable; `none` is the empty list (an empty variable counts as unset, like every other). */
function listOf(v: string): string[] {
  return v.trim().toLowerCase() === 'none' ? [] : list(v);
}

function set(tree: Tree, path: string[], value: unknown) {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === undefined || next === null || typeof next !== 'object') node[key] = {};
    node = node[key] as Tree;
  }
  node[path[path.length - 1] as string] = value;
}

const scalars: Array<[string, string[], 'str' | 'int' | 'bool' | 'list' | 'ints']> = [
  ['SVC_HTTP_HOST', ['http', 'host'], 'str'],
  ['SVC_HTTP_PORT', ['http', 'port'], 'int'],
  ['SVC_PUBLIC_BASE_URL', ['http', 'public_base_url'], 'str'],
  ['SVC_TRUST_PROXY', ['http', 'trust_proxy'], 'bool'],
  ['SVC_SUB_CACHE_SECONDS', ['http', 'sub_cache_seconds'], 'int'],
  ['SVC_HTTP_EXTRA_PORTS', ['http', 'extra_ports'], 'ints'],
  ['SVC_ADMIN_WEB_DIR', ['http', 'admin_web_dir'], 'str'],
  ['SVC_PORTAL_WEB_DIR', ['http', 'portal_web_dir'], 'str'],
  ['SVC_AGENT_DIST_DIR', ['http', 'agent_dist_dir'], 'str'],
  ['SVC_GRPC_HOST', ['grpc', 'host'], 'str'],
  ['SVC_GRPC_PORT', ['grpc', 'port'], 'int'],
  ['SVC_GRPC_PUBLIC_HOSTS', ['grpc', 'public_hosts'], 'list'],
  ['SVC_GRPC_PUBLIC_ENDPOINT', ['grpc', 'public_endpoint'], 'str'],
  ['SVC_ENROLL_TOKEN_TTL_SECONDS', ['grpc', 'enroll_token_ttl_seconds'], 'int'],
  ['SVC_GRPC_MIN_AGENT_VERSION', ['grpc', 'min_agent_version'], 'str'],
  ['SVC_GRPC_MAX_SEND_MESSAGE_BYTES', ['grpc', 'max_send_message_bytes'], 'int'],
  ['SVC_AGENT_COMMAND_TIMEOUT_SECONDS', ['grpc', 'command_timeout_seconds'], 'int'],
  ['SVC_GRPC_REPLICA_HEARTBEAT_SECONDS', ['grpc', 'replica_heartbeat_seconds'], 'int'],
  ['SVC_USAGE_INGEST_CONCURRENCY', ['grpc', 'usage_ingest_concurrency'], 'int'],
  ['SVC_USAGE_FOLD_MAX_ENTRIES', ['grpc', 'usage_fold_max_entries'], 'int'],
  ['SVC_USAGE_FOLD_CONCURRENCY', ['grpc', 'usage_fold_concurrency'], 'int'],
  ['SVC_USAGE_INBOX_MAX_ENTRIES', ['grpc', 'usage_inbox_max_entries'], 'int'],
  ['SVC_GRPC_GZIP_LEVEL', ['grpc', 'gzip_level'], 'int'],
  ['SVC_GRPC_GZIP_CACHE_MB', ['grpc', 'gzip_cache_mb'], 'int'],
  ['SVC_GRPC_GZIP_DISK_MB', ['grpc', 'gzip_disk_mb'], 'int'],
  ['SVC_GRPC_LAST_PUSH_DISK_MB', ['grpc', 'last_push_disk_mb'], 'int'],
  ['SVC_GRPC_GZIP_MIN_BYTES', ['grpc', 'gzip_min_bytes'], 'int'],
  ['SVC_GRPC_MEMBER_CACHE_ROWS', ['grpc', 'member_cache_rows'], 'int'],
  ['SVC_GRPC_TLS_SESSION_LIFETIME_SECONDS', ['grpc', 'tls_session_lifetime_seconds'], 'int'],
  ['SVC_GRPC_ADMISSIONS_PER_SECOND', ['grpc', 'admissions_per_second'], 'int'],
  ['SVC_GRPC_ADMISSION_CONCURRENCY', ['grpc', 'admission_concurrency'], 'int'],
  ['SVC_GRPC_LISTEN_BACKLOG', ['grpc', 'listen_backlog'], 'int'],
  ['SVC_GRPC_ADMISSION_MAX_WAIT_SECONDS', ['grpc', 'admission_max_wait_seconds'], 'int'],
  ['SVC_DATA_DIR', ['data_dir'], 'str'],
  ['DATABASE_URL', ['database', 'url'], 'str'],
  ['SVC_DATABASE_POOL_SIZE', ['database', 'pool_size'], 'int'],
  ['REDIS_URL', ['redis', 'url'], 'str'],
  ['SVC_REDIS_KEY_PREFIX', ['redis', 'key_prefix'], 'str'],
  ['SVC_LOG_LEVEL', ['log', 'level'], 'str'],
  ['SVC_METRICS_PORT', ['metrics', 'port'], 'int'],
  ['SVC_METRICS_HOST', ['metrics', 'host'], 'str'],
  ['SVC_METRICS_TOKEN', ['metrics', 'token'], 'str'],
  ['SVC_INSTALLATION_KEY', ['installation_key'], 'str'],
  ['SVC_INSTALLATION_KEY_FILE', ['installation_key_file'], 'str'],
  ['SVC_AUTH_PASSWORD_LOGIN', ['auth', 'password_login'], 'bool'],
  ['SVC_PORTAL_REGISTRATION', ['portal_auth', 'registration'], 'str'],
  ['SVC_PORTAL_PASSWORD_LOGIN', ['portal_auth', 'password_login'], 'bool'],
  ['SVC_AUTH_OAUTH_RETURN_URL', ['auth', 'oauth_return_url'], 'str'],
  ['SVC_PORTAL_OAUTH_RETURN_URL', ['portal_auth', 'oauth_return_url'], 'str'],
  ['SVC_PORTAL_LINK_URL', ['portal_auth', 'link_url'], 'str'],
  ['SVC_SMTP_URL', ['mail', 'smtp_url'], 'str'],
  ['SVC_MAIL_FROM', ['mail', 'from'], 'str'],
  ['SVC_MAIL_OUTBOX', ['mail', 'outbox'], 'bool'],
  ['SVC_NOTIFY_EMAIL_EVENTS', ['notify', 'email_events'], 'list'],
  ['SVC_ACME_EXTRA_CA_FILE', ['acme', 'extra_ca_file'], 'str'],
  ['SVC_ACME_PROPAGATION_TIMEOUT_SECONDS', ['acme', 'propagation_timeout_seconds'], 'int'],
  ['SVC_ACME_CLOUDFLARE_API_URL', ['acme', 'dns_api_base_urls', 'cloudflare'], 'str'],
  ['SVC_ACME_ROUTE53_API_URL', ['acme', 'dns_api_base_urls', 'route53'], 'str'],
  ['SVC_ACME_DIGITALOCEAN_API_URL', ['acme', 'dns_api_base_urls', 'digitalocean'], 'str'],
  ['SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS', ['outbound', 'allow_private_networks'], 'bool'],
  ['SVC_BILLING_RETURN_URL', ['billing', 'return_url'], 'str'],
  ['SVC_BILLING_STRIPE_API_URL', ['billing', 'api_base_urls', 'stripe'], 'str'],
  ['SVC_BILLING_CRYPTOBOT_API_URL', ['billing', 'api_base_urls', 'cryptobot'], 'str'],
  ['SVC_BILLING_YOOKASSA_API_URL', ['billing', 'api_base_urls', 'yookassa'], 'str'],
  ['SVC_BILLING_PENDING_MAX_HOURS', ['billing', 'pending_max_hours'], 'int'],
  ['SVC_BILLING_MANUAL_MAX_DAYS', ['billing', 'manual_max_days'], 'int'],
  ['SVC_BILLING_RECHECK_EVERY_SECONDS', ['billing', 'recheck_every_seconds'], 'int'],
  ['SVC_NOTIFY_EMAIL_ADMINS', ['notify', 'email_admins'], 'bool'],
  ['SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS', ['notify', 'node_offline_grace_seconds'], 'int'],
  ['SVC_BACKUP_DIR', ['backup', 'dir'], 'str'],
  ['SVC_BACKUP_EVERY_HOURS', ['backup', 'every_hours'], 'int'],
  ['SVC_BACKUP_KEEP', ['backup', 'keep'], 'int'],
  ['SVC_BACKUP_MAX_AGE_DAYS', ['backup', 'max_age_days'], 'int'],
  ['SVC_BACKUP_PASSPHRASE_FILE', ['backup', 'passphrase_file'], 'str'],
  ['SVC_ARGON2_MEMORY_KIB', ['password_hash', 'memory_kib'], 'int'],
  ['SVC_ARGON2_ITERATIONS', ['password_hash', 'iterations'], 'int'],
  ['SVC_ARGON2_PARALLELISM', ['password_hash', 'parallelism'], 'int'],
  ['SVC_PASSWORD_HASH_CONCURRENCY', ['password_hash', 'concurrency'], 'int'],
];

/** The environment variable that sets a config path, for messages ("SVC_HTTP_PORT (http.port)"). */
export function envNameOf(path: string): string | undefined {
  return scalars.find(([, p]) => p.join('.') === path)?.[0];
}

const OAUTH_ENV =
  /^SVC_(AUTH|PORTAL)_OAUTH_([A-Z0-9_]+?)_(CLIENT_ID|CLIENT_SECRET|ISSUER|AUTHORIZATION_ENDPOINT|TOKEN_ENDPOINT|USERINFO_ENDPOINT)$/;

export function applyEnv(tree: Tree, env: Env): Tree {
  for (const [name, path, kind] of scalars) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    set(
      tree,
      path,
      kind === 'int'
        ? int(name, raw)
        : kind === 'bool'
          ? bool(name, raw)
          : kind === 'list'
            ? listOf(raw)
            : kind === 'ints'
              ? listOf(raw).map((v) => int(name, v))
              : raw,
    );
  }
  for (const [name, raw] of Object.entries(env)) {
    const m = OAUTH_ENV.exec(name);
    if (!m || raw === undefined || raw === '') continue;
    const [, surface, provider, field] = m as unknown as [string, string, string, string];
    const section = surface === 'AUTH' ? 'auth' : 'portal_auth';
    set(tree, [section, 'oauth', provider.toLowerCase(), field.toLowerCase()], raw);
  }
  return tree;
}
