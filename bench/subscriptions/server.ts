// Child process: the admin surface over PostgreSQL in the schema named by BENCH_SCHEMA.
import { createAdminApi } from '@svc/admin-api';
import { connectDatabase } from '@svc/db';
import { CreateAdminInput, createAdmin, parseInput, SYSTEM, withActor } from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createRuntime } from '@svc/runtime';
import { answerParent } from '../common/children.ts';
import { childConfig, LIFTED_RATE_LIMITS } from '../common/server-child.ts';

const config = childConfig({}, LIFTED_RATE_LIMITS);
const database = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema: process.env.BENCH_SCHEMA });
const rt = await createRuntime(config, { database });
const email = `bench-${process.pid}@example.com`;
const password = 'bench-password-1';
await createAdmin(withActor(rt.deps, SYSTEM), parseInput(CreateAdminInput, { email, password, role: 'owner' }));
const admin = createAdminApi();
const http = createHttpService(rt.deps, (root) => root.route('/', admin.routes));
const { url } = await http.start();
answerParent({ url, email, password }, async () => {
  await http.stop();
  await admin.stop();
  await rt.close();
  await database.destroy();
});
