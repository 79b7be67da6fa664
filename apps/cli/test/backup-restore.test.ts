import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { mountAdminApi } from '@svc/admin-api';
import { loadConfig } from '@svc/config';
import { ArchiveFormatError, connectDatabase, WrongPassphraseError } from '@svc/db';
import { createPortalApi } from '@svc/portal-api';
import {
  createScratchDatabase,
  fleetOverRest,
  login,
  OWNER,
  setupOwner,
  startTestServer,
  type TestServer,
  testDatabaseUrl,
} from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backup } from '../src/commands/backup.ts';
import { RestoreRefusedError, restore } from '../src/commands/restore.ts';

/**
 * `svc backup` and `svc restore` as an operator uses them (docs/backups.md): an installation
 * is set up over the admin API, backed up, wiped, restored, and answers the same over real
 * HTTP: the same resources, the same /sub output for a link, sealed secrets that still open
 * (the link's token, the token signing key behind sign-in). On PGlite without DATABASE_URL;
 * with it, on PostgreSQL in databases of this run's own (created and dropped here), and an
 * archive of the embedded database restored onto PostgreSQL (embedded -> split).
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const PG_URL = testDatabaseUrl();
const KEY = randomBytes(32).toString('base64');
const PASSPHRASE = 'a passphrase for the key';
const work = mkdtempSync(join(tmpdir(), 'svc-backup-cli-'));
const quiet = { write: process.stdout.write.bind(process.stdout) };

beforeAll(() => {
  // The commands report on stdout; keep the test output readable.
  process.stdout.write = (() => true) as typeof process.stdout.write;
});
afterAll(() => {
  process.stdout.write = quiet.write;
  rmSync(work, { recursive: true, force: true });
});

interface Store {
  kind: 'pglite' | 'postgres';
  env: Record<string, string>;
  /** Removes every trace of the installation's data (the key file too when it lives in the data dir). */
  wipe(): Promise<void>;
  drop(): Promise<void>;
}

let stores = 0;
let blank: Promise<string> | undefined;
/**
 * An empty embedded database, initialised once per file (PGlite's initdb takes seconds): a
 * wiped data dir gets a copy, as a fresh machine's first open would make it.
 */
function blankDatabase(): Promise<string> {
  blank ??= (async () => {
    const dir = join(work, 'blank');
    await (await connectDatabase({ dataDir: dir })).destroy();
    return join(dir, 'pg');
  })();
  return blank;
}

function pgliteStore(): Store {
  const dir = join(work, `data-${++stores}`);
  const wipe = async () => {
    rmSync(dir, { recursive: true, force: true });
    cpSync(await blankDatabase(), join(dir, 'pg'), { recursive: true });
  };
  return { kind: 'pglite', env: { SVC_DATA_DIR: dir }, wipe, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function postgresStore(): Promise<Store> {
  const db = await createScratchDatabase(`backup_test_${process.pid}_${++stores}`);
  return { kind: 'postgres', env: { SVC_DATA_DIR: join(work, `pgdata-${stores}`), DATABASE_URL: db.url }, wipe: db.wipe, drop: db.drop };
}

const ENV = { SVC_PUBLIC_BASE_URL: 'http://svc.test', SVC_MAIL_OUTBOX: 'false' };

async function start(store: Store, key = KEY): Promise<{ s: TestServer; stop(): Promise<void> }> {
  const portal = createPortalApi();
  const s = await startTestServer({
    env: { ...ENV, ...store.env },
    useConfiguredDatabase: true,
    installationKey: key,
    mount: (root) => {
      root.route('/', portal.routes);
      return mountAdminApi(root);
    },
  });
  return {
    s,
    stop: async () => {
      await portal.stop();
      await s.stop();
    },
  };
}

const configOf = (store: Store, extra: Record<string, string> = { SVC_INSTALLATION_KEY: KEY }) =>
  loadConfig({ ...ENV, ...store.env, ...extra });

interface Fleet {
  subscriptionId: string;
  subToken: string;
}

/** An installation with a fleet (a node with two inbounds granted to a client's subscription), and what it answers. */
async function populate(store: Store): Promise<{ fleet: Fleet; before: Record<string, unknown> }> {
  const { s, stop } = await start(store);
  try {
    const { access_token: token } = await setupOwner(s);
    const api = { get: (p: string) => s.api.get(p, { token }), post: (p: string, b?: unknown) => s.api.post(p, b, { token }) };
    const made = await fleetOverRest.createFleetForProtocols(api, { ports: { 'vless-tcp': 21001, shadowsocks: 21002 } });
    const fleet = { subscriptionId: made.subscription.id, subToken: made.subscriptionToken };
    // Traffic on the counters (their own row, added by a trigger on the subscription's insert):
    // the archive's numbers come back, not a fresh row of zeros (the view and /sub show them).
    await s.database.db
      .updateTable('subscription_counters')
      .set({ used_bytes: 7_000, period_uplink_bytes: 2_000, period_downlink_bytes: 5_000, lifetime_used_bytes: 9_000 })
      .where('subscription_id', '=', fleet.subscriptionId)
      .execute();
    const before = await read(s, fleet);
    expect(before[`/api/v1/subscriptions/${fleet.subscriptionId}`]).toMatchObject({ used_bytes: 7_000 });
    return { fleet, before };
  } finally {
    await stop();
  }
}

/** What the installation answers over HTTP: resources, the subscription (its link opens a sealed token), its /sub output. */
async function answers(store: Store, fleet: Fleet, during?: () => Promise<void>): Promise<Record<string, unknown>> {
  const { s, stop } = await start(store);
  try {
    expect(s.setupToken, 'a restored installation is set up').toBeNull();
    await during?.();
    return await read(s, fleet);
  } finally {
    await stop();
  }
}

async function read(s: TestServer, fleet: Fleet): Promise<Record<string, unknown>> {
  // Sign-in issues a token signed with the sealed signing key: it opens with this key.
  const { access_token: token } = await login(s, OWNER.email, OWNER.password);
  const out: Record<string, unknown> = {};
  for (const path of [
    '/api/v1/nodes',
    '/api/v1/inbound-profiles',
    '/api/v1/inbounds',
    '/api/v1/access-groups',
    '/api/v1/clients',
    '/api/v1/subscriptions',
    `/api/v1/subscriptions/${fleet.subscriptionId}`,
    '/api/v1/admins',
  ]) {
    const res = await s.api.get(path, { token });
    expect(res.status, `${path} ${res.text}`).toBe(200);
    // Signing in just now moved last_login_at: everything else must be as it was.
    out[path] = JSON.parse(JSON.stringify(res.body, (k, v) => (k === 'last_login_at' ? undefined : v)));
  }
  const sub = await fetch(`${s.url}/sub/${fleet.subToken}`, { headers: { 'user-agent': fleetOverRest.SHARE_LINK_APP_UA } });
  expect(sub.status).toBe(200);
  out.sub = await sub.text();
  expect(String(out.sub).length).toBeGreaterThan(20);
  return out;
}

interface Source {
  store: Store;
  fleet: Fleet;
  before: Record<string, unknown>;
  /** An archive without the key. */
  plain: string;
  /** One with it, sealed with PASSPHRASE (in passFile), when asked for. */
  keyed: string;
  passFile: string;
}

/** An installation set up and backed up (twice with `keyed`): the source of every test of a store. */
async function source(store: Store, name: string, opts: { keyed: boolean }): Promise<Source> {
  await store.wipe();
  const { fleet, before } = await populate(store);
  const dir = join(work, name);
  mkdirSync(dir);
  await backup(configOf(store), { out: dir, includeKey: false, force: false });
  const plain = join(dir, readdirSync(dir)[0] as string);
  const passFile = join(dir, 'passphrase');
  writeFileSync(passFile, `${PASSPHRASE}\n`);
  const keyed = join(dir, 'keyed.tar.gz');
  if (opts.keyed) await backup(configOf(store), { out: keyed, includeKey: true, passphraseFile: passFile, force: false });
  return { store, fleet, before, plain, keyed, passFile };
}

const args = (file: string, more: { force?: boolean; passphraseFile?: string } = {}) => ({
  file,
  includeKey: false,
  force: false,
  ...more,
});

/**
 * The archive with one bit flipped near its middle, where the flip damages it: a few bits of a
 * deflate stream (a code length no symbol uses, say) decode to the very same bytes, and an
 * archive that reads back unchanged is not damaged (CI saw one such flip restore cleanly).
 */
function damagedCopy(original: Buffer): Buffer {
  const plain = gunzipSync(original);
  for (let at = Math.floor(original.length / 2); at < original.length - 8; at++) {
    const bytes = Buffer.from(original);
    bytes[at] = (bytes[at] as number) ^ 0x10;
    try {
      if (!gunzipSync(bytes).equals(plain)) return bytes;
    } catch {
      return bytes;
    }
  }
  throw new Error('no flip damaged the archive');
}

function suite(name: string, made: () => Promise<Source>) {
  describe(name, () => {
    let src: Source;
    beforeAll(async () => {
      src = await made();
    }, 180_000);
    afterAll(async () => src?.store.drop());

    it('backup, wipe, restore: the same resources, the same /sub output, sealed secrets still open; a second restore over it (without --force, or of a damaged archive) changes nothing', async () => {
      await src.store.wipe();
      await restore(configOf(src.store), args(src.plain));
      await expect(restore(configOf(src.store), args(src.plain))).rejects.toBeInstanceOf(RestoreRefusedError);
      const bytes = damagedCopy(readFileSync(src.plain));
      const damaged = join(work, `${name}-damaged.tar.gz`);
      writeFileSync(damaged, bytes);
      await expect(restore(configOf(src.store), args(damaged, { force: true }))).rejects.toBeInstanceOf(ArchiveFormatError);
      const during =
        src.store.kind === 'pglite'
          ? // The embedded database is open in the server: svc backup says why it cannot run.
            () => expect(backup(configOf(src.store), { includeKey: false, force: false })).rejects.toThrow(/stop the server for svc backup/)
          : undefined;
      expect(await answers(src.store, src.fleet, during)).toEqual(src.before);
    }, 120_000);

    it('without the key in the archive, a restore where no key or another key is configured is refused and changes nothing', async () => {
      await src.store.wipe();
      const other = configOf(src.store, { SVC_INSTALLATION_KEY: randomBytes(32).toString('base64') });
      await expect(restore(other, args(src.plain))).rejects.toThrow(/not the one the archive's database was sealed with/);
      await expect(restore(configOf(src.store, {}), args(src.plain))).rejects.toThrow(/does not contain the installation key/);
      // Still empty: a restore without --force goes through.
      await restore(configOf(src.store), args(src.plain));
    }, 120_000);

    it('--include-key: the key comes back from the archive with the passphrase, and not with a wrong one', async () => {
      await src.store.wipe();
      // The key lives in the data dir here: a wiped machine has lost it too.
      const keyFile = join(configOf(src.store, {}).data_dir, 'installation.key');
      rmSync(keyFile, { force: true });
      const wrong = join(work, `${name}-wrong`);
      writeFileSync(wrong, 'not the passphrase at all\n');
      await expect(restore(configOf(src.store, {}), args(src.keyed, { passphraseFile: wrong }))).rejects.toBeInstanceOf(
        WrongPassphraseError,
      );
      expect(existsSync(keyFile)).toBe(false);
      await restore(configOf(src.store, {}), args(src.keyed, { passphraseFile: src.passFile }));
      expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64').equals(Buffer.from(KEY, 'base64'))).toBe(true);
      expect(await answers(src.store, src.fleet)).toEqual(src.before);
    }, 120_000);
  });
}

// Each CI pass proves its store: the PGlite pass the embedded database, the PostgreSQL pass
// PostgreSQL and the embedded archive restored onto it.
if (!PG_URL) suite('on PGlite', () => source(pgliteStore(), 'embedded', { keyed: true }));
if (PG_URL) {
  suite('on PostgreSQL', async () => source(await postgresStore(), 'postgres', { keyed: true }));

  it('an archive of the embedded database restores onto PostgreSQL (growing from all-in-one to split)', async () => {
    const from = await source(pgliteStore(), 'embedded', { keyed: false });
    const server = await postgresStore();
    try {
      await restore(configOf(server), args(from.plain));
      expect(await answers(server, from.fleet)).toEqual(from.before);
    } finally {
      await server.drop();
    }
  }, 180_000);
}

describe.skipIf(PG_URL)('svc restore on the command line', () => {
  it('refuses an archive of a newer schema with a message naming both versions, exit status 1', async () => {
    const store = pgliteStore();
    const archive = join(work, 'newer.tar.gz');
    // A manifest from a newer build, checksummed as that build would.
    const { createHash } = await import('node:crypto');
    const { tarHeader, tarPadding, TAR_END } = await import('../../../packages/db/src/backup/tar.ts');
    const { gzipSync } = await import('node:zlib');
    const manifest = Buffer.from(
      JSON.stringify({
        format: 'svc-backup',
        format_version: 1,
        archive_id: 'x',
        created_at: new Date().toISOString(),
        app_version: '9.9.9',
        store: 'pglite',
        schema: { version: '2099-01-01T0000-future', migrations: ['2099-01-01T0000-future'] },
        installation: { key_check: null, key_included: false },
        tables: [],
        parts: [],
      }),
    );
    const sum = Buffer.from(createHash('sha256').update(manifest).digest('hex'));
    const now = new Date();
    writeFileSync(
      archive,
      gzipSync(
        Buffer.concat([
          tarHeader('manifest.json', manifest.length, now),
          manifest,
          tarPadding(manifest.length),
          tarHeader('manifest.sha256', sum.length, now),
          sum,
          tarPadding(sum.length),
          TAR_END,
        ]),
      ),
    );
    const child = spawn(process.execPath, ['apps/cli/bin/svc.mjs', 'restore', archive], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...store.env, SVC_INSTALLATION_KEY: KEY },
    });
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(stderr).toContain('2099-01-01T0000-future');
    expect(stderr).toMatch(/newer than this build's \d{4}-/);
    expect(stderr).not.toContain('    at ');
    expect(existsSync(store.env.SVC_DATA_DIR as string)).toBe(false);
  }, 60_000);
});
