import { ConfigError } from '@svc/config';

/**
 * The process wrapper every deployable's main.ts shares: SIGTERM/SIGINT handlers installed
 * before start-up (a stop waits for the start, then runs the returned close and exits 0); a
 * configuration error exits 78 (EX_CONFIG) with `<name>: refusing to start, ...`, any other
 * start-up failure exits 1 with its stack.
 */
export function runDeployable(name: string, start: () => Promise<() => Promise<void>>): void {
  const starting = start();
  const stop = async () => {
    const close = await starting.catch(() => undefined);
    await close?.();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  starting.catch((err: unknown) => {
    process.stderr.write(
      err instanceof ConfigError ? `${name}: refusing to start, ${err.message}\n` : `${name}: ${(err as Error).stack}\n`,
    );
    process.exit(err instanceof ConfigError ? 78 : 1);
  });
}
