// The worker as its own deployable (split mode): `node --import tsx apps/worker/src/main.ts`.
// Takes the background jobs (BullMQ over REDIS_URL; without Redis, only jobs this process
// enqueues itself, which is what `svc start` does in-process) and keeps the sweep scheduled.
import { loadConfig } from '@svc/config';
import { createRuntime, runDeployable } from '@svc/runtime';
import { createWorker } from './worker.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config);
  if (rt.shared.kind === 'memory') rt.log.warn('no REDIS_URL: this worker only sees jobs of its own process; split mode needs Redis');
  const worker = createWorker(rt);
  await worker.start();
  rt.log.info({ database: rt.database.location, shared_state: rt.shared.kind, mail: rt.mailer.kind }, 'worker running');
  return async () => {
    await worker.stop();
    await rt.close();
  };
}

runDeployable('worker', start);
