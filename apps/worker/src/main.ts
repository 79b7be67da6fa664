// The worker as its own deployable (split mode): `node --import tsx apps/worker/src/main.ts`.
// Takes the background jobs (BullMQ over REDIS_URL; without Redis, only jobs this process
// enqueues itself, which is what `svc start` does in-process), keeps the sweeps scheduled, and
// serves its HTTP ingress (POST /webhooks/payments/{provider}) on http.host:http.port.
import { loadConfig } from '@svc/config';
import { createHttpService } from '@svc/http';
import { addressScope, createRuntime, openUrl, runDeployable, startMetricsListener } from '@svc/runtime';
import { registerPaymentWebhooks } from './ingress/payment-webhooks.ts';
import { createWorker } from './worker.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config, { app: 'worker' });
  const metrics = await startMetricsListener(rt);
  if (rt.shared.kind === 'memory') rt.log.warn('no REDIS_URL: this worker only sees jobs of its own process; split mode needs Redis');
  const worker = createWorker(rt);
  await worker.start();
  const ingress = createHttpService(rt.deps, (root) => registerPaymentWebhooks(root));
  const bound = await ingress.start().catch(async (err) => {
    await worker.stop();
    await rt.close();
    throw err;
  });
  const url = openUrl(rt.config, bound.address, bound.port);
  const scope = addressScope(bound.address);
  rt.log.info(
    { address: bound.address, url, database: rt.database.location, shared_state: rt.shared.kind, mail: rt.mailer.kind },
    `worker running; payment webhooks listening on ${bound.address}${scope ? ` (${scope})` : ''}: providers post to ${url}/webhooks/payments/{provider}`,
  );
  return async () => {
    await metrics?.stop();
    await ingress.stop();
    await worker.stop();
    await rt.close();
  };
}

runDeployable('worker', start);
