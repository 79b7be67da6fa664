// The agent gateway as its own deployable (split mode): `node --import tsx apps/control-plane/src/main.ts`.
// Run as many replicas as needed behind a TCP load balancer: streams are spread over them,
// node changes reach every replica over Redis, and each replica serves the streams it holds.
import { loadConfig } from '@svc/config';
import { createRuntime, runDeployable, startMetricsListener } from '@svc/runtime';
import { startGateway } from './start.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config, { app: 'control-plane' });
  // Its only HTTP: the gateway speaks gRPC (docs/observability.md).
  const metrics = await startMetricsListener(rt);
  const gateway = await startGateway(rt);
  return async () => {
    await metrics?.stop();
    await gateway.stop();
    await rt.close();
  };
}

runDeployable('control-plane', start);
