import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '@svc/config';
import { connectDatabase, knownMigrations, migrateToLatest, NewerSchemaError, readSchemaState } from '@svc/db';

export interface MigrateOptions {
  /** Print what would run against the configured store and change nothing. */
  dryRun: boolean;
}

/**
 * `svc migrate`: brings the configured store to this build's schema. Forward only: a store a
 * newer build migrated is refused before anything runs (docs/upgrades.md).
 * `--dry-run` lists the migrations that would run, in order, and writes nothing: not even an
 * embedded database that does not exist yet.
 */
export async function migrate(config: Config, opts: MigrateOptions = { dryRun: false }): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (opts.dryRun && !config.database.url && !existsSync(join(resolve(config.data_dir, 'pg'), 'PG_VERSION'))) {
    const all = knownMigrations();
    out(`no database yet in ${resolve(config.data_dir)}: it would be created and ${count(all.length)} would run:`);
    for (const name of all) out(`  ${name}`);
    return;
  }
  const handle = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, poolSize: 1 });
  try {
    if (opts.dryRun) {
      const state = await readSchemaState(handle.db);
      if (state.unknown.length) throw new NewerSchemaError(state.unknown);
      if (state.pending.length === 0) {
        out(`database ${handle.location} is up to date (${state.applied.at(-1)})`);
        return;
      }
      out(`dry run: ${count(state.pending.length)} would run against ${handle.location}, in this order:`);
      for (const name of state.pending) out(`  ${name}`);
      out('nothing was changed');
      return;
    }
    const applied = await migrateToLatest(handle.db);
    out(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await handle.destroy();
  }
}

const count = (n: number) => `${n} migration${n === 1 ? '' : 's'}`;
