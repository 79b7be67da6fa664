import { Agent } from './agent.ts';
import { parseAgentCommand, USAGE, UsageError } from './args.ts';
import { engineSettingsFrom } from './engine/engine-settings.ts';
import { enroll } from './enroll.ts';
import { stateDirFrom } from './state-files.ts';
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
  const agent = new Agent({
    stateDir,
    engine: engineSettingsFrom(process.env),
    logLevel: process.env.SVC_AGENT_LOG_LEVEL,
    usageEveryMs: secondsFrom(process.env, 'SVC_AGENT_USAGE_INTERVAL_SECONDS', 10),
    statusEveryMs: secondsFrom(process.env, 'SVC_AGENT_STATUS_INTERVAL_SECONDS', 30),
  });
  await agent.start();
  await new Promise<void>((resolve) => {
    const onSignal = (sig: NodeJS.Signals) => {
      agent.log.info({ signal: sig }, 'stopping');
      agent.stop().then(resolve, (err) => {
        agent.log.error({ err }, 'stop failed');
        resolve();
      });
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  return 0;
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
