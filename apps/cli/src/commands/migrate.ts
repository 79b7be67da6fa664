import type { Config } from '@svc/config';
import { connectDatabase, migrateToLatest } from '@svc/db';

export async function migrate(config: Config): Promise<void> {
  const handle = await connectDatabase({ url: config.database.url, dataDir: config.data_dir });
  try {
    const applied = await migrateToLatest(handle.db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  } finally {
    await handle.destroy();
  }
}
