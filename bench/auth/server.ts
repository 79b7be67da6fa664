// Child process of the auth benchmark: the real admin surface over the all-in-one runtime
// (PGlite in a temp dir, or DATABASE_URL), rate limits lifted so they do not cap the figures.
import { createAdminApi } from '@svc/admin-api';
import { connectDatabase } from '@svc/db';
import { CreateAdminInput, createAdmin, parseInput, SYSTEM, withActor } from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createRuntime } from '@svc/runtime';
import { sql } from 'kysely';
import { answerParent } from '../common/children.ts';
import { childConfig, LIFTED_RATE_LIMITS } from '../common/server-child.ts';

const config = childConfig({}, LIFTED_RATE_LIMITS);
// On a PostgreSQL server the bench works in a schema of its own, dropped at the end.
const schema = config.database.url ? `bench_${process.pid}` : undefined;
const database = config.database.url ? await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema }) : undefined;
const rt = await createRuntime(config, database ? { database } : {});
const email = 'bench@example.com';
const password = 'bench-password-1';
await createAdmin(withActor(rt.deps, SYSTEM), parseInput(CreateAdminInput, { email, password, role: 'owner' }));
const admin = createAdminApi();
const http = createHttpService(rt.deps, (root) => root.route('/', admin.routes));
const { url } = await http.start();
// Public halves only: the bare-verify baseline uses the very key the server verifies with.
const keys = await rt.deps.db.selectFrom('signing_keys').select(['kid', 'public_jwk']).where('retired_at', 'is', null).execute();
answerParent({ url, email, password, keys, concurrency: rt.deps.passwords.concurrency, database: rt.database.kind }, async () => {
  await http.stop();
  await admin.stop();
  await rt.close();
  if (database && schema) {
    await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db);
    await database.destroy();
  }
});
