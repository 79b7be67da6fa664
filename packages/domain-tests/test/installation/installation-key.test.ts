import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindInstallationKey, InstallationKeyError, loadInstallationKey, systemClock } from '@svc/domain';
import { createTestDatabase } from '@svc/testkit';
import { describe, expect, it } from 'vitest';

// Issue 12.9: the installation key can live outside the data dir, so a copy of the data dir
// (or of the database's volume, or its backup) does not carry the key that opens its secrets.

const dirs = () => ({ data: mkdtempSync(join(tmpdir(), 'svc-data-')), keys: mkdtempSync(join(tmpdir(), 'svc-keys-')) });

describe('the installation key can live outside the data dir (SVC_INSTALLATION_KEY_FILE)', () => {
  it('a missing key file is created there on first start (0600, in a new 0700 directory) and read on every later start; the data dir gets no key', () => {
    const { data, keys } = dirs();
    const file = join(keys, 'secrets', 'installation.key');
    const first = loadInstallationKey({ installation_key_file: file, data_dir: data });
    expect(first).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(keys, 'secrets')).mode & 0o777).toBe(0o700);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toEqual(first);
    expect(loadInstallationKey({ installation_key_file: file, data_dir: data })).toEqual(first);
    expect(readdirSync(data)).toEqual([]);
  });

  it('an existing file is used as it is (a secrets mount), and what is not 32 bytes of base64 is refused with the path', () => {
    const { data, keys } = dirs();
    const file = join(keys, 'mounted.key');
    const key = Buffer.alloc(32, 5);
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o400 });
    expect(loadInstallationKey({ installation_key_file: file, data_dir: data })).toEqual(key);
    const bad = join(keys, 'bad.key');
    writeFileSync(bad, 'not a key');
    expect(() => loadInstallationKey({ installation_key_file: bad, data_dir: data })).toThrow(
      new InstallationKeyError(`${bad}: expected 32 bytes in base64, got 5 bytes`),
    );
  });

  it('giving both SVC_INSTALLATION_KEY and SVC_INSTALLATION_KEY_FILE is refused, and nothing is created', () => {
    const { data, keys } = dirs();
    const file = join(keys, 'installation.key');
    expect(() =>
      loadInstallationKey({ installation_key: Buffer.alloc(32, 1).toString('base64'), installation_key_file: file, data_dir: data }),
    ).toThrow(/both set: give one/);
    expect(existsSync(file)).toBe(false);
  });

  it('without either, the key is <data_dir>/installation.key as before', () => {
    const { data } = dirs();
    const key = loadInstallationKey({ data_dir: data });
    expect(readdirSync(data)).toEqual(['installation.key']);
    expect(loadInstallationKey({ data_dir: data })).toEqual(key);
  });

  it('a database bound to the key in the file refuses the data-dir key: moving the key means moving the file, not making a new one', async () => {
    const { data, keys } = dirs();
    const db = await createTestDatabase();
    try {
      const fromFile = loadInstallationKey({ installation_key_file: join(keys, 'installation.key'), data_dir: data });
      await bindInstallationKey(db.db, fromFile, systemClock);
      await bindInstallationKey(db.db, fromFile, systemClock);
      await expect(bindInstallationKey(db.db, loadInstallationKey({ data_dir: data }), systemClock)).rejects.toThrow(
        /SVC_INSTALLATION_KEY_FILE/,
      );
    } finally {
      await db.destroy();
    }
  });
});
