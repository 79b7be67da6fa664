// Child process: the admin surface over PostgreSQL in the schema named by BENCH_SCHEMA.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdminApi } from '@svc/admin-api';
import { loadConfig } from '@svc/config';
import { connectDatabase } from '@svc/db';
import { createAdmin, SYSTEM, withActor } from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createRuntime } from '@svc/runtime';

const lifted = { limit: 1_000_000_000, window_seconds: 1 };
const config = loadConfig(
  {
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-')),
    SVC_HTTP_HOST: '127.0.0.1',
    SVC_HTTP_PORT: '0',
    SVC_LOG_LEVEL: 'warn',
    ...process.env,
  },
  { rate_limits: { login: { per_ip: lifted, per_subject: lifted }, refresh: { per_ip: lifted, per_subject: lifted } } },
);
const database = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema: process.env.BENCH_SCHEMA });
const rt = await createRuntime(config, { database });
const email = `bench-${process.pid}@example.com`;
const password = 'bench-password-1';
await createAdmin(withActor(rt.deps, SYSTEM), { email, password, role: 'owner' });
const http = createHttpService(rt.deps, (root) => root.route('/', createAdminApi()));
const { url } = await http.start();
process.send?.({ url, email, password });
process.on('message', async (m) => {
  if (m === 'stop') {
    await http.stop();
    await rt.close();
    await database.destroy();
    process.exit(0);
  }
});
