import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, fromPGlite, migrateToLatest, migrations, PGLITE_EXTENSIONS } from './index.ts';

/**
 * PGlite is a single session. The dialect must hand it to one kysely transaction at a
 * time, or concurrent requests' statements land inside each other's transactions
 * (uncommitted reads, a ROLLBACK undoing someone else's work, a COMMIT publishing it).
 */

const handles: DatabaseHandle[] = [];
afterEach(async () => {
  while (handles.length) await handles.pop()?.destroy();
});

// One initdb for the file (seconds on 2 cores), then a clone per test: empty, or migrated once.
let blank: PGlite;
let migrated: PGlite;
beforeAll(async () => {
  blank = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  migrated = (await blank.clone()) as PGlite;
  await migrateToLatest(fromPGlite(migrated).db);
});
afterAll(async () => {
  await migrated?.close();
  await blank?.close();
});

/** A database of the test's own: a clone of the migrated template, or with `migrate: false` of the empty one. */
async function open(opts: { migrate?: boolean } = {}): Promise<DatabaseHandle> {
  const handle = fromPGlite((await (opts.migrate === false ? blank : migrated).clone()) as PGlite);
  handles.push(handle);
  return handle;
}

const now = new Date('2030-01-01T00:00:00Z');
const admin = (id: string) => ({
  id,
  email: `${id}@example.com`,
  password_hash: null,
  role: 'admin' as const,
  created_at: now,
  updated_at: now,
  last_login_at: null,
});

const countAdmins = async (db: DatabaseHandle['db']) =>
  (await db.selectFrom('admins').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;

class Rollback extends Error {}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('PGlite dialect: one session, transactions never interleave', () => {
  it("a concurrent transaction never sees another's uncommitted row, and the rollback leaves nothing", async () => {
    const { db } = await open();
    const inserted = deferred();
    const seenByB: number[] = [];
    const order: string[] = [];

    const txA = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('admins').values(admin('adm_a')).execute();
        order.push('A inserted');
        inserted.resolve();
        // Yield to the event loop long enough for B to try to run in the middle of A.
        await sleep(50);
        expect(await countAdmins(trx)).toBe(1); // A sees its own write
        order.push('A rolls back');
        throw new Rollback('undo A');
      })
      .catch((err: unknown) => {
        if (!(err instanceof Rollback)) throw err;
        order.push('A rolled back');
      });

    await inserted.promise;
    const txB = db.transaction().execute(async (trx) => {
      order.push('B started');
      seenByB.push(await countAdmins(trx));
      await sleep(5);
      seenByB.push(await countAdmins(trx));
    });
    // A plain query (no transaction) also waits its turn.
    const plain = countAdmins(db).then((n) => {
      order.push('plain read');
      return n;
    });

    await Promise.all([txA, txB]);
    expect(seenByB).toEqual([0, 0]);
    expect(await plain).toBe(0);
    // B's first statement (and the plain read) ran only after A's last one.
    expect(order.slice(0, 2)).toEqual(['A inserted', 'A rolls back']);
    expect(order).toEqual(expect.arrayContaining(['A rolled back', 'B started', 'plain read']));
    expect(await countAdmins(db)).toBe(0);
  });

  it("a concurrent transaction's COMMIT never publishes another's work, nor its ROLLBACK undoes it", async () => {
    const { db } = await open();
    const inserted = deferred();
    const a = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('admins').values(admin('adm_doomed')).execute();
        inserted.resolve();
        await sleep(30);
        throw new Rollback('undo');
      })
      .catch((err: unknown) => {
        if (!(err instanceof Rollback)) throw err;
      });
    await inserted.promise;
    // B commits while A (on the same session) is still open: A's row must not ride along.
    const b = db.transaction().execute(async (trx) => {
      await trx.insertInto('admins').values(admin('adm_kept')).execute();
    });
    await Promise.all([a, b]);
    const ids = (await db.selectFrom('admins').select('id').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['adm_kept']);
  });

  it('concurrent read-modify-write transactions lose no update (they run one after another)', async () => {
    const { db } = await open();
    await db.insertInto('admins').values(admin('adm_counter')).execute();
    const N = 10;
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        db.transaction().execute(async (trx) => {
          const row = await trx.selectFrom('admins').select('email').where('id', '=', 'adm_counter').executeTakeFirstOrThrow();
          const count = row.email.split('+').length - 1;
          await sleep(i % 3); // different yields so unserialised statements would interleave
          await trx
            .updateTable('admins')
            .set({ email: `${'+'.repeat(count + 1)}adm_counter@example.com` })
            .where('id', '=', 'adm_counter')
            .execute();
        }),
      ),
    );
    const row = await db.selectFrom('admins').select('email').where('id', '=', 'adm_counter').executeTakeFirstOrThrow();
    expect(row.email.split('+').length - 1).toBe(N);
  });

  it('a transaction that failed on an SQL error rolls back and hands the session on in a usable state', async () => {
    const { db } = await open();
    await db.insertInto('admins').values(admin('adm_1')).execute();
    const failing = db.transaction().execute(async (trx) => {
      await trx.insertInto('admins').values(admin('adm_2')).execute();
      // Unique violation on email: the session is now in an aborted transaction.
      await trx
        .insertInto('admins')
        .values({ ...admin('adm_3'), email: 'adm_1@example.com' })
        .execute();
    });
    const next = db.transaction().execute(async (trx) => {
      await trx.insertInto('admins').values(admin('adm_4')).execute();
      return countAdmins(trx);
    });
    await expect(failing).rejects.toThrow(/duplicate key|unique/i);
    expect(await next).toBe(2);
    const ids = (await db.selectFrom('admins').select('id').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['adm_1', 'adm_4']);
  });

  it('a rolled-back transaction leaves nothing behind, in any table it touched', async () => {
    const { db } = await open();
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('admins').values(admin('adm_x')).execute();
        await trx
          .insertInto('sessions')
          .values({
            id: 'ses_x',
            subject_type: 'admin',
            subject_id: 'adm_x',
            method: 'password',
            ip: null,
            user_agent: null,
            created_at: now,
            expires_at: now,
            refreshed_at: null,
            revoked_at: null,
            revoked_reason: null,
          })
          .execute();
        await trx.insertInto('setup_tokens').values({ token_hash: 'h', created_at: now }).execute();
        throw new Rollback('undo all');
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect(await countAdmins(db)).toBe(0);
    expect(await db.selectFrom('sessions').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('setup_tokens').selectAll().execute()).toEqual([]);
  });

  it('UPDATE reports the rows it changed (refresh-token reuse detection relies on numUpdatedRows)', async () => {
    const { db } = await open();
    await db
      .insertInto('admins')
      .values([admin('adm_1'), admin('adm_2')])
      .execute();
    const all = await db.updateTable('admins').set({ updated_at: now }).executeTakeFirst();
    expect(all.numUpdatedRows).toBe(2n);
    const none = await db.updateTable('admins').set({ updated_at: now }).where('id', '=', 'nobody').executeTakeFirst();
    expect(none.numUpdatedRows).toBe(0n);
    const del = await db.deleteFrom('admins').where('id', '=', 'adm_1').executeTakeFirst();
    expect(del.numDeletedRows).toBe(1n);
  });
});

describe('migrations on PGlite', () => {
  const all = Object.keys(migrations);

  it('the first run applies every registered migration, in order', async () => {
    const { db } = await open({ migrate: false });
    expect(await migrateToLatest(db)).toEqual(all);
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = current_schema() order by table_name`.execute(db);
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['admins', 'audit_log', 'installation', 'refresh_tokens', 'sessions', 'setup_tokens', 'signing_keys']),
    );
  });

  it('migrations are idempotent: a second run applies nothing and keeps the data', async () => {
    const { db } = await open({ migrate: false });
    expect(await migrateToLatest(db)).toEqual(all);
    await db.insertInto('admins').values(admin('adm_keep')).execute();
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await countAdmins(db)).toBe(1);
  });

  it('two migrations started at once apply each migration exactly once', async () => {
    const { db } = await open({ migrate: false });
    const [a, b] = await Promise.all([migrateToLatest(db), migrateToLatest(db)]);
    expect([...a, ...b].sort()).toEqual([...all].sort());
    expect(await migrateToLatest(db)).toEqual([]);
  });
});
