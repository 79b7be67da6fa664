// Child process of the auth benchmark: the real admin surface over the all-in-one runtime
// (PGlite in a temp dir, or DATABASE_URL), rate limits lifted so they do not cap the figures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdminApi } from '@svc/admin-api';
import { loadConfig } from '@svc/config';
import { connectDatabase } from '@svc/db';
import { createAdmin, SYSTEM, withActor } from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createRuntime } from '@svc/runtime';
import { sql } from 'kysely';

const lifted = { limit: 1_000_000_000, window_seconds: 1 };
const config = loadConfig(
  {
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-')),
    SVC_HTTP_HOST: '127.0.0.1',
    SVC_HTTP_PORT: '0',
    SVC_LOG_LEVEL: 'warn',
    ...process.env,
  },
  {
    rate_limits: { login: { per_ip: lifted, per_subject: lifted }, refresh: { per_ip: lifted, per_subject: lifted } },
  },
);
// On a PostgreSQL server the bench works in a schema of its own, dropped at the end.
const schema = config.database.url ? `bench_${process.pid}` : undefined;
const database = config.database.url ? await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema }) : undefined;
const rt = await createRuntime(config, database ? { database } : {});
const email = 'bench@example.com';
const password = 'bench-password-1';
await createAdmin(withActor(rt.deps, SYSTEM), { email, password, role: 'owner' });
const http = createHttpService(rt.deps, (root) => root.route('/', createAdminApi()));
const { url } = await http.start();
// Public halves only: the bare-verify baseline uses the very key the server verifies with.
const keys = await rt.deps.db.selectFrom('signing_keys').select(['kid', 'public_jwk']).where('retired_at', 'is', null).execute();
process.send?.({ url, email, password, keys, concurrency: rt.deps.passwords.concurrency, database: rt.database.kind });
process.on('message', async (m) => {
  if (m === 'stop') {
    await http.stop();
    await rt.close();
    if (database && schema) {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db);
      await database.destroy();
    }
    process.exit(0);
  }
});
