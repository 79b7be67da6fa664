// apps/worker/src/main.ts as the fault tests run it: the same runtime, worker and stop path
// (runDeployable), with the subscription sweep every second instead of every 30 s so a job
// killed or stopped mid-run is followed by the next within the test's patience.
import { loadConfig } from '@svc/config';
import { createRuntime, runDeployable } from '@svc/runtime';
import { createWorker } from '@svc/worker';

async function start() {
  const rt = await createRuntime(loadConfig(process.env));
  const worker = createWorker(rt, { sweepEveryMs: 1000 });
  await worker.start();
  rt.log.info({ shared_state: rt.shared.kind }, 'worker running');
  return async () => {
    await worker.stop();
    await rt.close();
  };
}

runDeployable('worker', start);
