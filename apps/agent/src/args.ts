import { parseArgs } from 'node:util';

/** The svc-agent command line. */
export class UsageError extends Error {}

export const USAGE = `usage: svc-agent <command>

  svc-agent enroll --server HOST:PORT --token T --ca-sha256 H [--state-dir DIR] [--force]
        turn a one-time enrollment token (POST /api/v1/nodes/{id}/enroll-token) into this
        node's identity; the CA is pinned by its SHA-256 before anything is sent
  svc-agent run [--state-dir DIR]
        keep the Sync stream to the gateway and serve the node's desired state with the engine
  svc-agent version

State directory (the same for enroll and run): --state-dir, else SVC_AGENT_STATE_DIR, else
/var/lib/svc-agent as root and ~/.local/state/svc-agent (or $XDG_STATE_HOME/svc-agent) otherwise.
Engine: SVC_AGENT_ENGINE_BIN (default xray on PATH), SVC_AGENT_ENGINE_API (xray | v2ray).
Log level: SVC_AGENT_LOG_LEVEL (default info). SVC_AGENT_RELEASE_DIR: install.sh's release
directory (upgrades from the panel). SIGTERM/SIGINT stop the agent and the engine; SIGUSR2 hands
the engine over to the next agent and exits (install.sh run again). Usage is read from the engine every
SVC_AGENT_USAGE_INTERVAL_SECONDS (default 10); StatusReport every SVC_AGENT_STATUS_INTERVAL_SECONDS (default 30).
Speed caps shape SVC_AGENT_SHAPE_DEVICES (comma-separated; default the default routes' devices; off). A device beyond a user's
device limit is tolerated for SVC_AGENT_DEVICE_GRACE_SECONDS (default 20).`;

export type AgentCommand =
  | { name: 'enroll'; server: string; token: string; caSha256: string; stateDir?: string; force: boolean }
  | { name: 'run'; stateDir?: string }
  | { name: 'version' }
  | { name: 'help' };

/** Options that take a value: the word after them is theirs, whatever it starts with. */
const VALUED = new Set(['--server', '--token', '--ca-sha256', '--state-dir']);

/**
 * `--token -x…` as `--token=-x…`: an enrollment token is base64url, so one in 64 starts with '-',
 * which parseArgs would take for another option ("argument is ambiguous") and refuse the command
 * the panel printed.
 */
function joinValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    const next = argv[i + 1];
    if (VALUED.has(word) && next !== undefined && next.startsWith('-') && !VALUED.has(next)) {
      out.push(`${word}=${next}`);
      i++;
    } else out.push(word);
  }
  return out;
}

export function parseAgentCommand(argv: string[]): AgentCommand {
  const { values, positionals } = parseArgs({
    args: joinValues(argv),
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      'ca-sha256': { type: 'string' },
      'state-dir': { type: 'string' },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const words = positionals.join(' ');
  if (values.help || words === '' || words === 'help') return { name: 'help' };
  const stateDir = values['state-dir'];
  if (words === 'enroll') {
    for (const k of ['server', 'token', 'ca-sha256'] as const) if (!values[k]) throw new UsageError(`svc-agent enroll: --${k} is required`);
    return {
      name: 'enroll',
      server: values.server as string,
      token: values.token as string,
      caSha256: values['ca-sha256'] as string,
      force: values.force ?? false,
      ...(stateDir ? { stateDir } : {}),
    };
  }
  if (words === 'run') return { name: 'run', ...(stateDir ? { stateDir } : {}) };
  if (words === 'version') return { name: 'version' };
  throw new UsageError(`unknown command: svc-agent ${words}`);
}
