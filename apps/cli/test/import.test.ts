import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectDatabase, type DatabaseHandle, migrateToLatest } from '@svc/db';
import { appEntry, createScratchDatabase, type ScratchDatabase, testDatabaseUrl } from '@svc/testkit';
import { MARZBAN_XRAY_CONFIG, marzbanStore } from '@svc/testkit/marzban-store';
import { marzneshinSqlite } from '@svc/testkit/marzneshin-store';
import { remnawaveStatements } from '@svc/testkit/remnawave-store';
import { xuiStore } from '@svc/testkit/xui-store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `svc import` as an operator runs it (issue 34 item 1): against a Marzban store built from its
 * own schema, --dry-run prints the mapping and what it cannot carry and writes nothing; the
 * import writes it; a second import changes nothing but the timestamps; a corrupt or foreign
 * file is refused with a clear error and nothing is written.
 */
const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'svc-import-'));
const server = testDatabaseUrl();
const schema = `imp_${randomBytes(6).toString('hex')}`;
const env: Record<string, string> = { SVC_DATA_DIR: join(dir, 'data') };
let open: () => Promise<DatabaseHandle>;
const files = {
  db: join(dir, 'db.sqlite3'),
  xui: join(dir, 'x-ui.db'),
  marzneshin: join(dir, 'marzneshin.sqlite3'),
  xray: join(dir, 'xray_config.json'),
  junk: join(dir, 'junk.sqlite3'),
  foreign: join(dir, 'foreign.sqlite3'),
};

beforeAll(async () => {
  if (server) {
    const url = new URL(server);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
    open = () => connectDatabase({ url: server, dataDir: env.SVC_DATA_DIR as string, schema, poolSize: 1 });
  } else open = () => connectDatabase({ dataDir: env.SVC_DATA_DIR as string });
  const h = await open();
  await migrateToLatest(h.db).finally(() => h.destroy());
  writeFileSync(
    files.db,
    await marzbanStore({
      secret: randomBytes(32).toString('hex'),
      users: [
        { username: 'alice', data_limit_reset_strategy: 'year', proxies: [{ type: 'VLESS', settings: { id: randomUUID(), flow: '' } }] },
        { username: 'bob', status: 'disabled', proxies: [{ type: 'Trojan', settings: { password: 'bob-holds-this' } }] },
      ],
    }),
  );
  writeFileSync(files.xray, MARZBAN_XRAY_CONFIG);
  writeFileSync(
    files.marzneshin,
    await marzneshinSqlite({
      services: { main: ['VLESS TCP'] },
      inbounds: [{ tag: 'VLESS TCP', config: { protocol: 'vless', port: 8443, network: 'tcp', tls: 'none' } }],
      users: [{ username: 'frank', key: '0123456789abcdef0123456789abcdef', services: ['main'] }],
    }),
  );
  writeFileSync(
    files.xui,
    await xuiStore({
      inbounds: [
        { tag: 'inbound-443', protocol: 'vless', port: 443, clients: [{ email: 'erin', subId: 'erinsub000000001', id: randomUUID() }] },
      ],
    }),
  );
  writeFileSync(files.junk, randomBytes(65_536));
  writeFileSync(files.foreign, Buffer.from(await marzbanStore({ secret: 'x', users: [] })).subarray(0, 4096));
});
afterAll(async () => {
  if (server) {
    const h = await connectDatabase({ url: server, dataDir: env.SVC_DATA_DIR as string, poolSize: 1 });
    await h.db.schema
      .dropSchema(schema)
      .ifExists()
      .cascade()
      .execute()
      .finally(() => h.destroy());
  }
  rmSync(dir, { recursive: true, force: true });
});

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SVC_') && k !== 'DATABASE_URL' && k !== 'REDIS_URL' && !k.startsWith('VITEST'),
    ),
  );
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...appEntry('apps/cli/src/main.ts').argv, ...args],
      { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const state = async () => {
  const h = await open();
  try {
    const count = async (t: 'clients' | 'subscriptions' | 'access_groups' | 'import_sources' | 'imported_users') =>
      (
        await h.db
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    return {
      clients: Number(await count('clients')),
      subscriptions: Number(await count('subscriptions')),
      groups: Number(await count('access_groups')),
      sources: Number(await count('import_sources')),
      users: Number(await count('imported_users')),
    };
  } finally {
    await h.destroy();
  }
};
const EMPTY = { clients: 0, subscriptions: 0, groups: 0, sources: 0, users: 0 };
const IMPORT = ['import', '--from', 'marzban', '--source', files.db, '--xray-config', files.xray];

describe('svc import --from marzban', () => {
  it('--dry-run prints the mapping and what it cannot carry, and writes nothing', async () => {
    const run = await svc([...IMPORT, '--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^dry run: nothing was written\. marzban "marzban" \(schema 2b231de97dc3\): 2 users to create, 0 to update, 5 access groups, 4 inbound profiles, 0 inbounds to create/,
    );
    expect(run.stdout).toContain('alice -> (new) (alice@marzban.import.invalid, active, VLESS TCP)');
    expect(run.stdout).toContain('bob -> (new) (bob@marzban.import.invalid, disabled, Trojan TCP)');
    expect(run.stdout).toContain('user alice: renewal: a yearly reset has no counterpart here');
    expect(run.stdout).toContain('VMess WS (vmess, port 8080) -> marzban: VMess WS, marzban: VMess WS');
    expect(run.stdout).toContain(
      'inbound Shadowsocks TCP: no inbound profile made: it names no Shadowsocks method and no user of it holds one',
    );
    expect(await state()).toEqual(EMPTY);
  }, 120_000);

  it('imports; a second import creates nothing new', async () => {
    const first = await svc([...IMPORT, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).counts).toEqual({
      users_created: 2,
      users_updated: 0,
      access_groups_created: 5,
      inbound_profiles_created: 4,
      inbounds_created: 0,
    });
    const after = await state();
    expect(after).toEqual({ clients: 2, subscriptions: 2, groups: 5, sources: 1, users: 2 });
    const second = await svc([...IMPORT, '--json']);
    expect(JSON.parse(second.stdout).counts).toEqual({
      users_created: 0,
      users_updated: 2,
      access_groups_created: 0,
      inbound_profiles_created: 0,
      inbounds_created: 0,
    });
    expect(await state()).toEqual(after);
  }, 120_000);

  it('--from 3x-ui --dry-run maps a subscriber by its subId and writes nothing', async () => {
    const before = await state();
    const run = await svc(['import', '--from', '3x-ui', '--source', files.xui, '--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^dry run: nothing was written\. 3x-ui "3x-ui": 1 users to create/);
    expect(run.stdout).toContain('erinsub000000001 -> (new) (erinsub000000001@3x-ui.import.invalid, active, inbound-443)');
    expect(await state()).toEqual(before);
  }, 120_000);

  it('--from marzneshin --dry-run derives the credentials from the key and writes nothing', async () => {
    const before = await state();
    const run = await svc(['import', '--from', 'marzneshin', '--source', files.marzneshin, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      dry_run: true,
      source: { kind: 'marzneshin' },
      counts: { users_created: 1, inbound_profiles_created: 1 },
    });
    expect(report.users[0]).toMatchObject({ username: 'frank', access_groups: ['VLESS TCP'] });
    expect(await state()).toEqual(before);
  }, 120_000);

  it.runIf(server)(
    '--from remnawave reads its PostgreSQL database through the URL, read-only, and imports',
    async () => {
      let scratch: ScratchDatabase | undefined;
      try {
        scratch = await createScratchDatabase(`cli_remnawave_${randomBytes(4).toString('hex')}`);
        const c = new pg.Client({ connectionString: scratch.url });
        await c.connect();
        for (const statement of remnawaveStatements({
          layout: '3.x',
          squads: { Default: ['VLESS'] },
          inbounds: [{ tag: 'VLESS', raw: { protocol: 'vless', port: 443, streamSettings: { network: 'tcp', security: 'none' } } }],
          users: [
            {
              username: 'gina',
              shortUuid: 'ginaShortUuid00001',
              expireAt: '2099-01-01 00:00:00',
              vlessUuid: randomUUID(),
              trojanPassword: 't',
              ssPassword: 's',
              squads: ['Default'],
            },
          ],
        }))
          await c.query(statement);
        await c.end();
        const run = await svc(['import', '--from', 'remnawave', '--source', scratch.url, '--name', 'rw', '--json']);
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({
          dry_run: false,
          counts: { users_created: 1 },
          users: [{ username: 'gina', access_groups: ['VLESS'] }],
        });
      } finally {
        await scratch?.drop();
      }
    },
    120_000,
  );

  it('a file that is not SQLite, or not a whole Marzban database, is refused with a clear error; nothing is written', async () => {
    const before = await state();
    for (const [file, said] of [
      [files.junk, 'not an SQLite database'],
      [files.foreign, 'Marzban database'],
      [join(dir, 'missing.sqlite3'), 'cannot be read: ENOENT'],
    ] as const) {
      const run = await svc(['import', '--from', 'marzban', '--source', file]);
      expect(run.code, file).toBe(1);
      expect(run.stderr).toContain(said);
      expect(run.stderr).toMatch(/nothing was imported\n$/);
    }
    const node = await svc([...IMPORT, '--node', 'no-such-node']);
    expect(node.code).toBe(1);
    expect(node.stderr).toContain('no such node: no-such-node');
    const unknown = await svc(['import', '--from', 'xui', '--source', files.db]);
    expect(unknown.stderr).toContain('--from must be marzban, marzneshin, 3x-ui or remnawave, not "xui"');
    const url = await svc(['import', '--from', 'marzban', '--source', 'postgres://127.0.0.1/marzban']);
    expect(url.stderr).toContain('give the file, not a URL');
    expect(await state()).toEqual(before);
  }, 120_000);
});
