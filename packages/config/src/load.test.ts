import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig, mailTransportOf } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function configFile(ext: 'yaml' | 'yml' | 'json', text: string): string {
  const path = join(dir, `config-${++files}.${ext}`);
  writeFileSync(path, text);
  return path;
}

/** The ConfigError thrown by `loadConfig(env)`, failing the test when it starts instead. */
function refusal(env: Record<string, string | undefined>, overrides?: Record<string, unknown>): ConfigError {
  try {
    loadConfig(env, overrides);
  } catch (err) {
    // Compare by name, not instanceof (conventions: no instanceof across package copies).
    expect((err as Error).name).toBe('ConfigError');
    expect(err).toBeInstanceOf(Error);
    return err as ConfigError;
  }
  throw new Error(`expected loadConfig to refuse ${JSON.stringify(env)}`);
}

describe('defaults: an empty environment is a working all-in-one installation', () => {
  it('listens on 0.0.0.0:8080, keeps data in ./data, embedded database, in-memory shared state', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(8080);
    expect(c.http.host).toBe('0.0.0.0');
    expect(c.http.trust_proxy).toBe(false);
    expect(c.data_dir).toBe('./data');
    expect(c.database.url).toBeUndefined();
    expect(c.redis.url).toBeUndefined();
    expect(c.installation_key).toBeUndefined();
    expect(c.log.level).toBe('info');
  });

  it('registration is closed and both password sign-ins are on, with no OAuth provider (spec 5.8, 5.9)', () => {
    const c = loadConfig({});
    expect(c.portal_auth.registration).toBe('closed');
    expect(c.auth.password_login).toBe(true);
    expect(c.auth.oauth).toEqual({});
    expect(c.portal_auth.password_login).toBe(true);
    expect(c.portal_auth.oauth).toEqual({});
    expect(c.mail.smtp_url).toBeUndefined();
  });

  it('Argon2id defaults to the OWASP minimum m=19456 KiB, t=2, p=1 (spec 5.5)', () => {
    const c = loadConfig({});
    expect(c.password_hash).toMatchObject({ memory_kib: 19456, iterations: 2, parallelism: 1 });
  });

  it('one default per key: a section given empty, or with one key, gets the defaults a section left out gets', () => {
    const whole = loadConfig({}) as unknown as Record<string, unknown>;
    const objects = (value: unknown): value is Record<string, unknown> =>
      typeof value === 'object' && value !== null && !Array.isArray(value);
    // Every object section and sub-section, given as {} on its own: nothing else may change
    // (a budget's window, {limit, window_seconds}, is one value: given, it is given whole).
    const paths: string[][] = [];
    const walk = (value: Record<string, unknown>, path: string[]) => {
      for (const [key, inner] of Object.entries(value))
        if (objects(inner) && !('window_seconds' in inner)) {
          paths.push([...path, key]);
          walk(inner, [...path, key]);
        }
    };
    walk(whole, []);
    expect(paths).toContainEqual(['rate_limits', 'magic_link']);
    for (const path of paths) {
      const given: Record<string, unknown> = {};
      let at = given;
      for (const key of path.slice(0, -1)) at = at[key] = {};
      at[path.at(-1) as string] = {};
      expect(loadConfig({}, given), path.join('.')).toEqual(whole);
    }
    // A key set by the environment leaves its siblings at their defaults.
    const one = loadConfig({ SVC_HTTP_PORT: '9090' });
    expect({ ...one.http, port: 8080 }).toEqual(whole.http);
    expect(loadConfig({}).rate_limits.magic_link.per_ip).toEqual({ limit: 30, window_seconds: 60 });
  });

  it('loadConfig() with no arguments is the same as an empty environment', () => {
    expect(loadConfig()).toEqual(loadConfig({}));
  });
});

describe('environment overrides', () => {
  it('SVC_HTTP_PORT, SVC_HTTP_HOST, SVC_DATA_DIR, DATABASE_URL and REDIS_URL land on their keys', () => {
    const c = loadConfig({
      SVC_HTTP_PORT: '9090',
      SVC_HTTP_HOST: '127.0.0.1',
      SVC_DATA_DIR: '/var/lib/svc',
      DATABASE_URL: 'postgres://svc@db:5432/svc',
      REDIS_URL: 'redis://cache:6379/2',
    });
    expect(c.http.port).toBe(9090);
    expect(c.http.host).toBe('127.0.0.1');
    expect(c.data_dir).toBe('/var/lib/svc');
    expect(c.database.url).toBe('postgres://svc@db:5432/svc');
    expect(c.redis.url).toBe('redis://cache:6379/2');
  });

  it('the agent gateway listens on 8443 for localhost and 127.0.0.1 by default; SVC_GRPC_* override it (issue 4)', () => {
    const d = loadConfig({});
    expect(d.grpc.port).toBe(8443);
    expect(d.grpc.public_hosts).toEqual(['localhost', '127.0.0.1']);
    expect(d.grpc.enroll_token_ttl_seconds).toBe(24 * 3600);
    const c = loadConfig({
      SVC_GRPC_PORT: '9443',
      SVC_GRPC_PUBLIC_HOSTS: ' cp.example.com, 203.0.113.7 ,',
      SVC_GRPC_PUBLIC_ENDPOINT: 'cp.example.com:443',
      SVC_ENROLL_TOKEN_TTL_SECONDS: '3600',
    });
    expect(c.grpc).toMatchObject({
      port: 9443,
      public_hosts: ['cp.example.com', '203.0.113.7'],
      public_endpoint: 'cp.example.com:443',
      enroll_token_ttl_seconds: 3600,
    });
  });

  it('SVC_HTTP_PORT=0 asks for an ephemeral port (tests, svc start on port 0)', () => {
    expect(loadConfig({ SVC_HTTP_PORT: '0' }).http.port).toBe(0);
  });

  it('an empty variable counts as unset: the default stays', () => {
    const c = loadConfig({ SVC_HTTP_PORT: '', DATABASE_URL: '', SVC_AUTH_PASSWORD_LOGIN: '' });
    expect(c.http.port).toBe(8080);
    expect(c.database.url).toBeUndefined();
    expect(c.auth.password_login).toBe(true);
  });

  // With password_login off the admin needs an OAuth provider (spec 5.9 rule 3), so the
  // "off" spellings are checked with one configured.
  const google = { SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'id', SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 'secret' };
  it.each([
    ['true', true],
    ['TRUE', true],
    ['on', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['False', false],
    ['off', false],
    ['0', false],
    ['no', false],
  ])('SVC_AUTH_PASSWORD_LOGIN=%s means password_login %s', (raw, expected) => {
    expect(loadConfig({ ...google, SVC_AUTH_PASSWORD_LOGIN: raw }).auth.password_login).toBe(expected);
  });

  it('SVC_PORTAL_REGISTRATION, SVC_PORTAL_PASSWORD_LOGIN and SVC_SMTP_URL set the portal policy', () => {
    const c = loadConfig({ SVC_PORTAL_REGISTRATION: 'open', SVC_PORTAL_PASSWORD_LOGIN: 'off', SVC_SMTP_URL: 'smtp://mail:25' });
    expect(c.portal_auth.registration).toBe('open');
    expect(c.portal_auth.password_login).toBe(false);
    expect(c.mail.smtp_url).toBe('smtp://mail:25');
  });

  it('mail: SMTP wins; else the outbox, on by default only with the embedded database; SVC_MAIL_OUTBOX overrides', () => {
    expect(mailTransportOf(loadConfig({}))).toBe('outbox');
    expect(mailTransportOf(loadConfig({ SVC_SMTP_URL: 'smtps://u:p@mail:465' }))).toBe('smtp');
    expect(mailTransportOf(loadConfig({ DATABASE_URL: 'postgres://db/svc' }))).toBe('none');
    expect(mailTransportOf(loadConfig({ DATABASE_URL: 'postgres://db/svc', SVC_MAIL_OUTBOX: 'on' }))).toBe('outbox');
    expect(mailTransportOf(loadConfig({ SVC_MAIL_OUTBOX: 'off' }))).toBe('none');
    expect(mailTransportOf(loadConfig({ SVC_MAIL_OUTBOX: 'on', SVC_SMTP_URL: 'smtp://mail:25' }))).toBe('smtp');
    expect(loadConfig({ SVC_MAIL_FROM: 'Ops <ops@example.com>' }).mail.from).toBe('Ops <ops@example.com>');
  });

  it('SVC_SMTP_URL must be smtp:// or smtps://', () => {
    expect(refusal({ SVC_SMTP_URL: 'http://mail:25' }).problems[0]).toMatch(/^SVC_SMTP_URL \(mail\.smtp_url\): /);
  });

  it('SVC_NOTIFY_EMAIL_EVENTS: client.registered, payment.awaiting_confirmation and node.apply_failed by default, a comma list, none = no mails; SVC_NOTIFY_EMAIL_ADMINS; SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS', () => {
    expect(loadConfig({}).notify).toEqual({
      email_events: ['client.registered', 'payment.awaiting_confirmation', 'node.apply_failed'],
      email_admins: false,
      node_offline_grace_seconds: 120,
    });
    expect(loadConfig({ SVC_NOTIFY_EMAIL_EVENTS: 'client.registered, node.offline' }).notify.email_events).toEqual([
      'client.registered',
      'node.offline',
    ]);
    expect(loadConfig({ SVC_NOTIFY_EMAIL_EVENTS: 'none' }).notify.email_events).toEqual([]);
    expect(loadConfig({ SVC_NOTIFY_EMAIL_ADMINS: 'true' }).notify.email_admins).toBe(true);
    expect(refusal({ SVC_NOTIFY_EMAIL_EVENTS: 'Client Registered' }).problems[0]).toContain('notify.email_events');
    expect(loadConfig({ SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS: '300' }).notify.node_offline_grace_seconds).toBe(300);
    expect(refusal({ SVC_NOTIFY_NODE_OFFLINE_GRACE_SECONDS: '1' }).problems[0]).toContain('notify.node_offline_grace_seconds');
  });

  it('SVC_<SURFACE>_OAUTH_<PROVIDER>_<FIELD> configures a provider under auth.oauth or portal_auth.oauth', () => {
    const c = loadConfig({
      SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'admin-id',
      SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 'admin-secret',
      SVC_PORTAL_OAUTH_GITHUB_CLIENT_ID: 'portal-id',
      SVC_PORTAL_OAUTH_GITHUB_CLIENT_SECRET: 'portal-secret',
    });
    expect(c.auth.oauth).toEqual({ google: { client_id: 'admin-id', client_secret: 'admin-secret' } });
    expect(c.portal_auth.oauth).toEqual({ github: { client_id: 'portal-id', client_secret: 'portal-secret' } });
  });

  it('overrides (the second argument) win over the environment', () => {
    const c = loadConfig({ SVC_HTTP_PORT: '9090', SVC_HTTP_HOST: '10.0.0.1' }, { http: { port: 1234 } });
    expect(c.http.port).toBe(1234);
    expect(c.http.host).toBe('10.0.0.1');
  });
});

describe('invalid values refuse to start with a message naming the variable', () => {
  it('SVC_HTTP_PORT=abc', () => {
    const err = refusal({ SVC_HTTP_PORT: 'abc' });
    expect(err.message).toContain('SVC_HTTP_PORT');
    expect(err.message).toContain('"abc"');
    expect(err.message).toMatch(/integer/);
  });

  it('SVC_HTTP_PORT=8080.5 is not an integer either', () => {
    expect(refusal({ SVC_HTTP_PORT: '8080.5' }).message).toContain('SVC_HTTP_PORT');
  });

  it('SVC_HTTP_PORT=70000 is out of range (names http.port)', () => {
    const err = refusal({ SVC_HTTP_PORT: '70000' });
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(/^SVC_HTTP_PORT \(http\.port\): .*\(got 70000\)$/);
  });

  it('SVC_AUTH_PASSWORD_LOGIN=maybe', () => {
    const err = refusal({ SVC_AUTH_PASSWORD_LOGIN: 'maybe' });
    expect(err.message).toContain('SVC_AUTH_PASSWORD_LOGIN');
    expect(err.message).toContain('"maybe"');
    expect(err.message).toMatch(/true or false/);
  });

  it('SVC_PORTAL_PASSWORD_LOGIN=perhaps', () => {
    expect(refusal({ SVC_PORTAL_PASSWORD_LOGIN: 'perhaps' }).message).toContain('SVC_PORTAL_PASSWORD_LOGIN');
  });

  it('SVC_PORTAL_REGISTRATION=sometimes names the key and lists the accepted modes', () => {
    const err = refusal({ SVC_PORTAL_REGISTRATION: 'sometimes' });
    expect(err.problems).toHaveLength(1);
    const [problem] = err.problems as [string];
    // The schema speaks the spec's key (portal_auth.registration, documented next to
    // SVC_PORTAL_REGISTRATION in spec 5.9); the accepted values are spelled out.
    expect(problem).toMatch(/^SVC_PORTAL_REGISTRATION \(portal_auth\.registration\): .*\(got "sometimes"\)$/);
    for (const mode of ['closed', 'application', 'open']) expect(problem).toContain(mode);
  });

  it('SVC_LOG_LEVEL=loud names log.level', () => {
    expect(refusal({ SVC_LOG_LEVEL: 'loud' }).problems[0]).toMatch(/^SVC_LOG_LEVEL \(log\.level\): /);
  });

  it('the message is one readable block starting with "invalid configuration"', () => {
    const err = refusal({ SVC_HTTP_PORT: 'abc' });
    expect(err.message).toMatch(/^invalid configuration:\n {2}- SVC_HTTP_PORT: /);
  });
});

describe('startup invariants (spec 5.9 rule 3)', () => {
  it('admin password sign-in off with no admin OAuth provider refuses: nobody could sign in', () => {
    const err = refusal({ SVC_AUTH_PASSWORD_LOGIN: 'false' });
    expect(err.problems).toHaveLength(1);
    expect(err.message).toContain('auth.password_login');
    expect(err.message).toContain('auth.oauth');
  });

  it('a portal OAuth provider does not count for the admin surface', () => {
    const err = refusal({
      SVC_AUTH_PASSWORD_LOGIN: 'false',
      SVC_PORTAL_OAUTH_GOOGLE_CLIENT_ID: 'id',
      SVC_PORTAL_OAUTH_GOOGLE_CLIENT_SECRET: 'secret',
    });
    expect(err.message).toContain('auth.password_login');
  });

  it('admin password sign-in off with an admin OAuth provider (client id + secret) starts', () => {
    const c = loadConfig({
      SVC_AUTH_PASSWORD_LOGIN: 'false',
      SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'id',
      SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 'secret',
    });
    expect(c.auth.password_login).toBe(false);
    expect(Object.keys(c.auth.oauth)).toEqual(['google']);
  });

  it('an admin OAuth provider with a client id but no secret is not a provider: refused', () => {
    const err = refusal({ SVC_AUTH_PASSWORD_LOGIN: 'false', SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'id' });
    expect(err.message).toContain('auth.oauth.google.client_secret');
  });

  // An external database means no outbox by default (mail.outbox is on only with the embedded one).
  const PG = { DATABASE_URL: 'postgres://svc@db:5432/svc' };
  it.each([
    'application',
    'open',
  ])('registration %s with portal password sign-in on and no mail transport refuses: registrations could never be confirmed', (mode) => {
    const err = refusal({ ...PG, SVC_PORTAL_REGISTRATION: mode });
    expect(err.problems).toHaveLength(1);
    expect(err.message).toContain(`portal_auth.registration is ${mode}`);
    expect(err.message).toContain('SVC_SMTP_URL');
    expect(err.message).toContain('SVC_MAIL_OUTBOX');
  });

  it('the outbox switched off with the embedded database is no transport either: refused', () => {
    const err = refusal({ SVC_PORTAL_REGISTRATION: 'open', SVC_MAIL_OUTBOX: 'false' });
    expect(err.problems).toHaveLength(1);
    expect(err.message).toContain('no mail transport');
  });

  it.each(['application', 'open'])('registration %s with the embedded database starts: the outbox is its mail transport', (mode) => {
    const c = loadConfig({ SVC_PORTAL_REGISTRATION: mode });
    expect(c.mail.outbox).toBeUndefined();
    expect(mailTransportOf(c)).toBe('outbox');
  });

  it('registration open with an external database and SVC_MAIL_OUTBOX=true starts: the outbox counts as a transport', () => {
    const c = loadConfig({ ...PG, SVC_PORTAL_REGISTRATION: 'open', SVC_MAIL_OUTBOX: 'true' });
    expect(mailTransportOf(c)).toBe('outbox');
  });

  it.each(['application', 'open'])('registration %s with SVC_SMTP_URL starts', (mode) => {
    const c = loadConfig({ ...PG, SVC_PORTAL_REGISTRATION: mode, SVC_SMTP_URL: 'smtp://mail.example.com:587' });
    expect(c.portal_auth.registration).toBe(mode);
    expect(mailTransportOf(c)).toBe('smtp');
    expect(c.mail.smtp_url).toBe('smtp://mail.example.com:587');
  });

  it.each(['application', 'open'])('registration %s with SVC_PORTAL_PASSWORD_LOGIN=false (no mail) starts', (mode) => {
    const c = loadConfig({ ...PG, SVC_PORTAL_REGISTRATION: mode, SVC_PORTAL_PASSWORD_LOGIN: 'false' });
    expect(c.portal_auth.registration).toBe(mode);
    expect(c.portal_auth.password_login).toBe(false);
  });

  it('registration closed needs no mail transport', () => {
    expect(loadConfig({ ...PG, SVC_PORTAL_REGISTRATION: 'closed' }).portal_auth.registration).toBe('closed');
  });

  it('both invariants broken: both are reported at once', () => {
    const err = refusal({ ...PG, SVC_AUTH_PASSWORD_LOGIN: 'off', SVC_PORTAL_REGISTRATION: 'open' });
    expect(err.problems).toHaveLength(2);
    expect(err.problems.join('\n')).toContain('auth.password_login');
    expect(err.problems.join('\n')).toContain('portal_auth.registration is open');
  });

  it('a provider other than google and github needs an issuer or all three endpoints (nothing to sign in with otherwise)', () => {
    const err = refusal({ SVC_PORTAL_OAUTH_CORP_CLIENT_ID: 'id', SVC_PORTAL_OAUTH_CORP_CLIENT_SECRET: 'secret' });
    expect(err.message).toContain('portal_auth.oauth.corp needs an issuer');
    const byIssuer = loadConfig({
      SVC_AUTH_OAUTH_CORP_CLIENT_ID: 'id',
      SVC_AUTH_OAUTH_CORP_CLIENT_SECRET: 'secret',
      SVC_AUTH_OAUTH_CORP_ISSUER: 'https://login.corp.example',
      SVC_AUTH_OAUTH_RETURN_URL: 'https://panel.example.com/signed-in',
    });
    expect(byIssuer.auth.oauth.corp?.issuer).toBe('https://login.corp.example');
    expect(byIssuer.auth.oauth_return_url).toBe('https://panel.example.com/signed-in');
    const byEndpoints = loadConfig({
      SVC_AUTH_OAUTH_CORP_CLIENT_ID: 'id',
      SVC_AUTH_OAUTH_CORP_CLIENT_SECRET: 'secret',
      SVC_AUTH_OAUTH_CORP_AUTHORIZATION_ENDPOINT: 'https://corp.example/authorize',
      SVC_AUTH_OAUTH_CORP_TOKEN_ENDPOINT: 'https://corp.example/token',
      SVC_AUTH_OAUTH_CORP_USERINFO_ENDPOINT: 'https://corp.example/userinfo',
    });
    expect(Object.keys(byEndpoints.auth.oauth)).toEqual(['corp']);
  });

  it('invariants hold for values that came from the config file too', () => {
    const path = configFile('yaml', 'auth:\n  password_login: false\n');
    expect(refusal({ SVC_CONFIG_FILE: path }).message).toContain('auth.password_login');
  });
});

describe('config file (SVC_CONFIG_FILE)', () => {
  const yaml = [
    'http:',
    '  port: 7000',
    '  host: 127.0.0.2',
    'data_dir: /srv/svc',
    'portal_auth:',
    '  registration: application',
    '  password_login: false',
    'auth:',
    '  oauth:',
    '    google:',
    '      client_id: from-file',
    'password_hash:',
    '  memory_kib: 65536',
    '  iterations: 3',
    '',
  ].join('\n');

  it('a YAML file is read', () => {
    const c = loadConfig({ SVC_CONFIG_FILE: configFile('yaml', yaml), SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 's' });
    expect(c.http).toMatchObject({ port: 7000, host: '127.0.0.2' });
    expect(c.data_dir).toBe('/srv/svc');
    expect(c.portal_auth).toMatchObject({ registration: 'application', password_login: false });
    expect(c.password_hash).toMatchObject({ memory_kib: 65536, iterations: 3, parallelism: 1 });
  });

  it('a .yml file is read as YAML', () => {
    expect(loadConfig({ SVC_CONFIG_FILE: configFile('yml', 'http:\n  port: 7001\n') }).http.port).toBe(7001);
  });

  it('a JSON file is read', () => {
    const path = configFile('json', JSON.stringify({ http: { port: 7100 }, data_dir: '/srv/json', log: { level: 'warn' } }));
    const c = loadConfig({ SVC_CONFIG_FILE: path });
    expect(c.http.port).toBe(7100);
    expect(c.data_dir).toBe('/srv/json');
    expect(c.log.level).toBe('warn');
  });

  it('the environment wins over the file, key by key; untouched file keys stay', () => {
    const c = loadConfig({
      SVC_CONFIG_FILE: configFile('yaml', yaml),
      SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 's',
      SVC_HTTP_PORT: '7777',
      SVC_PORTAL_REGISTRATION: 'closed',
    });
    expect(c.http.port).toBe(7777);
    expect(c.http.host).toBe('127.0.0.2');
    expect(c.portal_auth.registration).toBe('closed');
    expect(c.portal_auth.password_login).toBe(false);
    // client_id from the file and client_secret from the environment form one provider.
    expect(c.auth.oauth.google).toEqual({ client_id: 'from-file', client_secret: 's' });
  });

  it('the environment wins over a JSON file as well', () => {
    const path = configFile('json', JSON.stringify({ auth: { password_login: false } }));
    expect(loadConfig({ SVC_CONFIG_FILE: path, SVC_AUTH_PASSWORD_LOGIN: 'true' }).auth.password_login).toBe(true);
  });

  it('an empty file is an empty config', () => {
    expect(loadConfig({ SVC_CONFIG_FILE: configFile('yaml', '') })).toEqual(loadConfig({}));
  });

  it.each([
    [
      'an OAuth client_secret (admin)',
      'auth:\n  oauth:\n    google:\n      client_id: a\n      client_secret: b\n',
      'auth.oauth.google.client_secret',
    ],
    [
      'an OAuth client_secret (portal)',
      'portal_auth:\n  oauth:\n    github:\n      client_id: a\n      client_secret: b\n',
      'portal_auth.oauth.github.client_secret',
    ],
    ['the installation_key', `installation_key: ${Buffer.alloc(32, 1).toString('base64')}\n`, 'installation_key'],
    ['the SMTP URL (it carries the mail password)', 'mail:\n  smtp_url: smtp://user:pw@mail:587\n', 'mail.smtp_url'],
  ])('%s in the file is refused: secrets only through the environment', (_what, text, key) => {
    const err = refusal({ SVC_CONFIG_FILE: configFile('yaml', text) });
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toContain(key);
    expect(err.problems[0]).toMatch(/only from the environment/);
  });

  it('a secret in a JSON file is refused even when the environment sets the same key', () => {
    const path = configFile('json', JSON.stringify({ installation_key: 'x' }));
    const err = refusal({ SVC_CONFIG_FILE: path, SVC_INSTALLATION_KEY: Buffer.alloc(32).toString('base64') });
    expect(err.message).toContain('installation_key');
  });

  it('a missing file refuses and names the path', () => {
    const path = join(dir, 'does-not-exist.yaml');
    expect(refusal({ SVC_CONFIG_FILE: path }).message).toContain(path);
  });

  it('a file that does not parse refuses and names the path', () => {
    const path = configFile('json', '{ "http": ');
    expect(refusal({ SVC_CONFIG_FILE: path }).message).toContain(path);
  });

  it('a file whose top level is not a mapping refuses', () => {
    const path = configFile('yaml', '- a\n- b\n');
    expect(refusal({ SVC_CONFIG_FILE: path }).message).toMatch(/mapping/);
  });

  it('a wrongly typed value in the file refuses with the key', () => {
    const path = configFile('yaml', 'http:\n  port: eighty\n');
    expect(refusal({ SVC_CONFIG_FILE: path }).problems[0]).toMatch(/^SVC_HTTP_PORT \(http\.port\): .*\(got "eighty"\)$/);
  });
});

describe('Argon2id parameters below the OWASP minimum are refused (m=19 MiB, t=2, p=1)', () => {
  it.each([
    ['SVC_ARGON2_MEMORY_KIB', '19455', 'password_hash.memory_kib'],
    ['SVC_ARGON2_ITERATIONS', '1', 'password_hash.iterations'],
    ['SVC_ARGON2_PARALLELISM', '0', 'password_hash.parallelism'],
  ])('%s=%s', (name, value, key) => {
    const err = refusal({ [name]: value });
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(new RegExp(`^${name} \\(${key.replaceAll('.', '\\.')}\\): .*\\(got ${value}\\)$`));
  });

  it('the same floor holds for the config file', () => {
    const path = configFile('yaml', 'password_hash:\n  memory_kib: 4096\n  iterations: 1\n');
    const err = refusal({ SVC_CONFIG_FILE: path });
    expect(err.problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'SVC_ARGON2_ITERATIONS (password_hash.iterations)',
      'SVC_ARGON2_MEMORY_KIB (password_hash.memory_kib)',
    ]);
  });

  it('exactly the minimum and anything above it start', () => {
    expect(
      loadConfig({ SVC_ARGON2_MEMORY_KIB: '19456', SVC_ARGON2_ITERATIONS: '2', SVC_ARGON2_PARALLELISM: '1' }).password_hash,
    ).toMatchObject({
      memory_kib: 19456,
      iterations: 2,
      parallelism: 1,
    });
    expect(
      loadConfig({ SVC_ARGON2_MEMORY_KIB: '65536', SVC_ARGON2_ITERATIONS: '4', SVC_ARGON2_PARALLELISM: '2' }).password_hash,
    ).toMatchObject({
      memory_kib: 65536,
      iterations: 4,
      parallelism: 2,
    });
  });
});

describe('connection URLs with credentials are secrets', () => {
  it('a database.url or redis.url carrying a password in the config file is refused', () => {
    const path = configFile('yaml', 'database:\n  url: postgres://svc:hunter2@db/svc\nredis:\n  url: redis://:pw@cache:6379\n');
    const err = refusal({ SVC_CONFIG_FILE: path });
    expect(err.problems.join('\n')).toMatch(/database\.url/);
    expect(err.problems.join('\n')).toMatch(/redis\.url/);
  });

  it('the same URLs from the environment are accepted, and SVC_REDIS_KEY_PREFIX sets the key prefix', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://svc:hunter2@db/svc',
      REDIS_URL: 'redis://:pw@cache:6379',
      SVC_REDIS_KEY_PREFIX: 'tenant-a:',
    });
    expect(c.database.url).toBe('postgres://svc:hunter2@db/svc');
    expect(c.redis).toEqual({ url: 'redis://:pw@cache:6379', key_prefix: 'tenant-a:' });
    expect(loadConfig({}).redis.key_prefix).toBe('svc:');
  });
});
