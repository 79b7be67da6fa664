// The agent gateway as its own deployable (split mode): `node --import tsx apps/control-plane/src/main.ts`.
// Run as many replicas as needed behind a TCP load balancer: streams are spread over them,
// node changes reach every replica over Redis, and each replica serves the streams it holds.
import { ConfigError, loadConfig } from '@svc/config';
import { createRuntime } from '@svc/runtime';
import { startGateway } from './start.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config);
  const gateway = await startGateway(rt);
  return async () => {
    await gateway.stop();
    await rt.close();
  };
}

async function main() {
  const starting = start();
  const stop = async () => {
    const close = await starting.catch(() => undefined);
    await close?.();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await starting;
}

main().catch((err: unknown) => {
  process.stderr.write(
    err instanceof ConfigError ? `control-plane: refusing to start, ${err.message}\n` : `control-plane: ${(err as Error).stack}\n`,
  );
  process.exit(err instanceof ConfigError ? 78 : 1);
});
