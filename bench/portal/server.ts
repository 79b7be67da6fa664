// Child process of bench:portal-magic-link: the portal and the worker over the all-in-one
// runtime (PGlite in a temp dir, or DATABASE_URL; mail into the outbox), rate limits lifted so
// they do not cap the figures, and `KNOWN` clients to ask links for.
import { createAdminApi } from '@svc/admin-api';
import { connectDatabase } from '@svc/db';
import { CreateClientInput, createClient, parseInput, SYSTEM, withActor } from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createPortalApi } from '@svc/portal-api';
import { createRuntime } from '@svc/runtime';
import { createWorker } from '@svc/worker';
import { sql } from 'kysely';
import { answerParent } from '../common/children.ts';
import { childConfig } from '../common/server-child.ts';

const KNOWN = Number(process.env.BENCH_KNOWN ?? 200);
const lifted = { limit: 1_000_000, window_seconds: 60 };
const config = childConfig(
  { SVC_MAIL_OUTBOX: 'true' },
  { rate_limits: { magic_link: { per_ip: lifted, per_subject: lifted, mails_per_email: lifted } } },
);
const schema = config.database.url ? `bench_${process.pid}` : undefined;
const database = config.database.url ? await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema }) : undefined;
const rt = await createRuntime(config, database ? { database } : {});
const ctx = withActor(rt.deps, SYSTEM);
const emails: string[] = [];
for (let i = 0; i < KNOWN; i++) {
  const email = `known-${i}@example.com`;
  await createClient(ctx, parseInput(CreateClientInput, { email }));
  emails.push(email);
}
const admin = createAdminApi();
const portal = createPortalApi();
const http = createHttpService(rt.deps, (root) => {
  root.route('/', admin.routes);
  root.route('/', portal.routes);
});
const worker = createWorker(rt);
await worker.start();
const { url } = await http.start();
answerParent({ url, emails, database: rt.database.kind }, async () => {
  await http.stop();
  await admin.stop();
  await worker.stop();
  await portal.stop();
  await rt.close();
  if (database && schema) {
    await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db);
    await database.destroy();
  }
});
