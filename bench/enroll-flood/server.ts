// Child process of the enroll-flood benchmark: the agent gateway over the all-in-one runtime
// (PGlite in a temp dir; DATABASE_URL is ignored, the flood never reaches the database in the
// hardened gateway). BENCH_BASELINE=1 runs it with the receive limits as they were before
// issue 12.5: 64 MiB for every method, Enroll included.
import { createControlPlane } from '@svc/control-plane';
import { createRuntime } from '@svc/runtime';
import { answerParent } from '../common/children.ts';
import { childConfig } from '../common/server-child.ts';

const OLD_LIMIT = 64 * 1024 * 1024;
const baseline = process.env.BENCH_BASELINE === '1';
const { DATABASE_URL: _ignored, ...env } = process.env;
process.env = env;
// Enroll's rate limits lifted: every call of the flood reaches the gateway's decoder.
const lifted = { limit: 1_000_000_000, window_seconds: 1 };
const rt = await createRuntime(childConfig({}, { rate_limits: { enroll: { per_ip: lifted, per_subject: lifted } } }));
const gateway = createControlPlane(rt.deps, {
  host: '127.0.0.1',
  port: 0,
  tlsHosts: ['localhost', '127.0.0.1'],
  ...(baseline ? { maxEnrollMessageBytes: OLD_LIMIT, maxReceiveMessageBytes: OLD_LIMIT } : {}),
});
const { port, caCertPem } = await gateway.start();
answerParent({ port, caCertPem }, async () => {
  await gateway.stop();
  await rt.close();
});
