import { constants } from 'node:os';

/** How long a stop may take before the process gives up on a clean close (orchestrators kill at 30 s). */
export const SHUTDOWN_DEADLINE_MS = 25_000;

/**
 * Signals this soon after the first are the same request to stop. One Ctrl-C reaches a process
 * started through pnpm more than once: the terminal sends SIGINT to the whole process group and
 * pnpm forwards the SIGINT it got to its child, and a pnpm that itself got two (npm forwards
 * too, under `npx pnpm`) sends SIGTERM. Taken as a second signal, that was a forced stop and
 * "ELIFECYCLE Command failed" on every Ctrl-C.
 */
export const SAME_STOP_WINDOW_MS = 1_000;

export interface StopOnSignalsOptions {
  deadlineMs?: number;
  /** Where the "stopping" and "stopped" lines go (JSON lines, pino's format); stdout by default. */
  write?: (line: string) => void;
  /** Ends the process; `process.exit` by default (tests pass their own). */
  exit?: (code: number) => void;
}

/**
 * SIGTERM and SIGINT stop the process the same way (docs/operations.md, "Stopping"): the first
 * logs `stopping` with the signal, runs `stop`, logs `stopped` and exits 0. A stop that fails, or
 * takes longer than `deadlineMs`, exits 1 with a line on stderr: the orchestrator must not wait
 * for ever, and a non-zero code tells it the stop was not clean. Signals within
 * SAME_STOP_WINDOW_MS of the first are the same stop; a signal after that, while the stop runs,
 * is an operator insisting: the process exits at once, 128 + the signal's number, as a shell
 * reports a process a signal ended.
 */
export function stopOnSignals(name: string, stop: () => Promise<void>, opts: StopOnSignalsOptions = {}): void {
  const deadlineMs = opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  const write = opts.write ?? ((line: string) => process.stdout.write(line));
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const log = (fields: Record<string, unknown>) => write(`${JSON.stringify({ level: 30, time: Date.now(), svc: name, ...fields })}\n`);
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (firstAt !== undefined) {
      if (now - firstAt < SAME_STOP_WINDOW_MS) return;
      process.stderr.write(`${name}: ${signal} during the stop; exiting at once\n`);
      exit(128 + (constants.signals[signal] ?? 0));
      return;
    }
    firstAt = now;
    log({ signal, msg: 'stopping' });
    const timer = setTimeout(() => {
      process.stderr.write(`${name}: not stopped within ${deadlineMs} ms of ${signal}; exiting\n`);
      exit(1);
    }, deadlineMs);
    timer.unref();
    stop().then(
      () => {
        clearTimeout(timer);
        log({ signal, duration_ms: Date.now() - now, msg: 'stopped' });
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(timer);
        process.stderr.write(`${name}: stop failed: ${(err as Error)?.stack ?? String(err)}\n`);
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
