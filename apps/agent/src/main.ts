import { constants } from 'node:os';
import { Agent } from './agent.ts';
import { parseAgentCommand, USAGE, UsageError } from './args.ts';
import { engineSettingsFrom } from './engine/engine-settings.ts';
import { enroll } from './enroll.ts';
import { stateDirFrom } from './state-files.ts';
import { rollBack, upgradeOnStart } from './upgrade/pending-upgrade.ts';
import { AGENT_VERSION } from './version.ts';

/** `svc-agent` (bin/svc-agent.mjs, `pnpm svc-agent ...`). */
async function main(argv: string[]): Promise<number> {
  const cmd = parseAgentCommand(argv);
  if (cmd.name === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (cmd.name === 'version') {
    console.log(AGENT_VERSION);
    return 0;
  }
  const stateDir = stateDirFrom(cmd.stateDir, process.env);
  if (cmd.name === 'enroll') {
    const id = await enroll({ server: cmd.server, token: cmd.token, caSha256: cmd.caSha256, stateDir, force: cmd.force });
    console.log(JSON.stringify({ msg: 'enrolled', node_id: id.nodeId, server: id.server, state_dir: stateDir }));
    return 0;
  }
  const releaseDir = process.env.SVC_AGENT_RELEASE_DIR?.trim() || null;
  const onStart = await upgradeOnStart(stateDir, AGENT_VERSION);
  if (onStart.kind === 'roll-back' && releaseDir) {
    // The engine is left as it runs: the old agent, started next by the supervisor, adopts it.
    await rollBack(stateDir, releaseDir, onStart.pending, onStart.reason);
    console.error(`svc-agent: ${onStart.reason}`);
    return 1;
  }
  let restarting = false;
  const agent = new Agent({
    stateDir,
    releaseDir,
    upgradeOnStart: onStart,
    onRestart: (code) => {
      restarting = true;
      process.exit(code);
    },
    engine: engineSettingsFrom(process.env),
    logLevel: process.env.SVC_AGENT_LOG_LEVEL,
    usageEveryMs: secondsFrom(process.env, 'SVC_AGENT_USAGE_INTERVAL_SECONDS', 10),
    statusEveryMs: secondsFrom(process.env, 'SVC_AGENT_STATUS_INTERVAL_SECONDS', 30),
    deviceGraceMs: secondsFrom(process.env, 'SVC_AGENT_DEVICE_GRACE_SECONDS', 20),
    // Speed caps: the devices towards the clients, comma-separated (default: the default routes'); `off` turns them off.
    shapeDevices: process.env.SVC_AGENT_SHAPE_DEVICES?.split(',')
      .map((d) => d.trim())
      .filter((d) => d !== ''),
  });
  // Signals are taken from the first moment: a stop during start-up waits for the start.
  const starting = agent.start();
  // SIGUSR2 (install.sh run again): hand the engine over and exit; the supervisor starts the
  // release current.mjs names, which adopts the engine (users keep their connections).
  process.on('SIGUSR2', () => {
    if (restarting) return;
    restarting = true;
    agent.log.info('SIGUSR2: handing over to the next agent');
    void starting
      .then(() => agent.handOver())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  const stopped = stopOnSignals(agent.log, async () => {
    await starting;
    await agent.stop();
  });
  await starting;
  return stopped;
}

/** Signals this soon after the first are the same Ctrl-C, come again through pnpm (docs/operations.md, "Stopping"). */
const SAME_STOP_WINDOW_MS = 1_000;

/**
 * SIGINT (Ctrl-C) and SIGTERM (systemd) stop the agent alike: `stopping`, the stop, `agent
 * stopped`, exit 0; a stop that fails exits 1. The rule of the control plane's processes
 * (packages/runtime stop-on-signals.ts; the agent runs alone on a node and does not load the
 * control plane's runtime): repeats within SAME_STOP_WINDOW_MS are the same stop, a later one
 * exits at once.
 */
function stopOnSignals(log: Agent['log'], stop: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let firstAt: number | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (firstAt !== undefined) {
        if (Date.now() - firstAt < SAME_STOP_WINDOW_MS) return;
        log.warn({ signal }, 'signal during the stop; exiting at once');
        process.exit(128 + (constants.signals[signal] ?? 0));
      }
      firstAt = Date.now();
      log.info({ signal }, 'stopping');
      stop().then(
        () => resolve(0),
        (err: unknown) => {
          log.error({ err }, 'stop failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** A positive number of seconds from the environment, in ms. */
function secondsFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback * 1000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400)
    throw new UsageError(`${name} must be a number of seconds (0-86400], not ${JSON.stringify(raw)}`);
  return Math.round(n * 1000);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) console.error(`${err.message}\n\n${USAGE}`);
    else console.error(`svc-agent: ${(err as Error).message ?? String(err)}`);
    process.exit(err instanceof UsageError ? 64 : 1);
  },
);
