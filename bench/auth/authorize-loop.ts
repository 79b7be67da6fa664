// Child of the auth benchmark (or run alone): the cost of authorizing a request against the
// admin as they are now (issue 12.7), in one process on one core, against the baseline of
// what a request cost before: the bare token check (signature, expiry, scope, token role).
// Rounds of each alternate, so a load change on the machine hits both alike.
import { performance } from 'node:perf_hooks';
import { connectDatabase } from '@svc/db';
import {
  authorize,
  CreateAdminInput,
  createAdmin,
  loginAdminWithPassword,
  PasswordLoginInput,
  parseInput,
  SYSTEM,
  withActor,
} from '@svc/domain';
import { READERS } from '@svc/http';
import { createRuntime } from '@svc/runtime';
import { sql } from 'kysely';
import { answerParent } from '../common/children.ts';
import { childConfig, LIFTED_RATE_LIMITS } from '../common/server-child.ts';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

const config = childConfig({}, LIFTED_RATE_LIMITS);
// On a PostgreSQL server the bench works in a schema of its own, dropped at the end.
const schema = config.database.url ? `bench_${process.pid}` : undefined;
const database = config.database.url ? await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema }) : undefined;
const rt = await createRuntime(config, database ? { database } : {});
const email = 'bench@example.com';
const password = 'bench-password-1';
await createAdmin(withActor(rt.deps, SYSTEM), parseInput(CreateAdminInput, { email, password, role: 'owner' }));
const { access_token: token } = await loginAdminWithPassword(rt.deps, parseInput(PasswordLoginInput, { email, password }), {
  ip: '127.0.0.1',
});
const header = `Bearer ${token}`;
const meta = { ip: '127.0.0.1', route: () => 'GET /auth/me' };

async function before() {
  const claims = await rt.deps.tokens.verifyAccess(token, 'admin');
  if (!claims.role || !READERS.includes(claims.role)) throw new Error('role');
}
const after = () => authorize(rt.deps, header, { scope: 'admin', roles: READERS }, meta);

async function round(fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ROUND_MS) {
    for (let i = 0; i < 100; i++) await fn();
    n += 100;
  }
  return (n * 1000) / (performance.now() - start);
}

await round(before); // warm-up
await round(after);
const b: number[] = [];
const a: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  b.push(await round(before));
  a.push(await round(after));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
const result = { before: median(b), after: median(a), database: rt.database.kind };
await rt.close();
if (database && schema) {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db);
  await database.destroy();
}
if (process.send) answerParent(result, async () => {});
else {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
