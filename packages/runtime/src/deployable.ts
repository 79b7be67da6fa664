import { ConfigError } from '@svc/config';
import { MigrationError } from '@svc/db';
import { stopOnSignals } from './stop-on-signals.ts';

/**
 * The process wrapper every deployable's main.ts shares: SIGTERM/SIGINT handled before start-up
 * (stopOnSignals: a stop waits for the start, then runs the returned close, logs `stopped` and
 * exits 0); a configuration error exits 78 (EX_CONFIG) with `<name>: refusing to start, ...`; a
 * schema it cannot run on (a newer build's, a failed migration) exits 1 with
 * `<name>: refusing to start, ...` (docs/upgrades.md); any other start-up failure exits 1 with its
 * stack.
 *
 * The close each app returns drains: HTTP stops accepting and lets requests in flight finish,
 * the gateway ends its streams UNAVAILABLE (agents reconnect to another replica) and writes what
 * it holds, the worker finishes or returns its current job. A close that fails or outlasts
 * the deadline exits 1 (stopOnSignals).
 */
export function runDeployable(name: string, start: () => Promise<() => Promise<void>>, opts: { deadlineMs?: number } = {}): void {
  const starting = start();
  stopOnSignals(
    name,
    async () => {
      const close = await starting.catch(() => undefined);
      await close?.();
    },
    opts,
  );
  starting.catch((err: unknown) => {
    process.stderr.write(
      err instanceof ConfigError || err instanceof MigrationError
        ? `${name}: refusing to start, ${err.message}\n`
        : `${name}: ${(err as Error).stack}\n`,
    );
    process.exit(err instanceof ConfigError ? 78 : 1);
  });
}
