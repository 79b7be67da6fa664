import { ConfigError } from '@svc/config';
import { MigrationError } from '@svc/db';

/** How long a stop may take before the process gives up on a clean close (orchestrators kill at 30 s). */
export const SHUTDOWN_DEADLINE_MS = 25_000;

/**
 * The process wrapper every deployable's main.ts shares: SIGTERM/SIGINT handlers installed
 * before start-up (a stop waits for the start, then runs the returned close and exits 0); a
 * configuration error exits 78 (EX_CONFIG) with `<name>: refusing to start, ...`; a schema it
 * cannot run on (a newer build's, a failed migration) exits 1 with `<name>: refusing to start, ...`
 * (docs/upgrades.md); any other start-up failure exits 1 with its stack.
 *
 * The close each app returns drains: HTTP stops accepting and lets requests in flight finish,
 * the gateway ends its streams UNAVAILABLE (agents reconnect to another replica) and writes what
 * it holds, the worker finishes or returns its current job. A close that fails, or takes longer
 * than `deadlineMs`, exits 1 with a line on stderr saying so: the orchestrator must not wait
 * for ever, and a non-zero code tells it the stop was not clean. A second signal during the
 * stop is the default action (the process ends at once).
 */
export function runDeployable(name: string, start: () => Promise<() => Promise<void>>, opts: { deadlineMs?: number } = {}): void {
  const starting = start();
  const deadlineMs = opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  const stop = async (signal: NodeJS.Signals) => {
    // One line in the apps' log format (pino's), so operators see why the process is going.
    process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), svc: name, signal, msg: 'stopping' })}\n`);
    const timer = setTimeout(() => {
      process.stderr.write(`${name}: not stopped within ${deadlineMs} ms of ${signal}; exiting\n`);
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    const close = await starting.catch(() => undefined);
    try {
      await close?.();
    } catch (err) {
      process.stderr.write(`${name}: stop failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  starting.catch((err: unknown) => {
    process.stderr.write(
      err instanceof ConfigError || err instanceof MigrationError
        ? `${name}: refusing to start, ${err.message}\n`
        : `${name}: ${(err as Error).stack}\n`,
    );
    process.exit(err instanceof ConfigError ? 78 : 1);
  });
}
