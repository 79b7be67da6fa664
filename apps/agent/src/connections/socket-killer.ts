import { execFile } from 'node:child_process';
import { isIPv6 } from 'node:net';
import { promisify } from 'node:util';
import type { AccessEntry } from './access-log.ts';

const run = promisify(execFile);

/**
 * Ends TCP connections by their client address with the kernel's SOCK_DESTROY (`ss -K`, from
 * iproute2). Removing a user through the engine's API only refuses their new connections; the
 * open ones would go on until the client closes them. Destroying the engine's socket towards
 * the client ends them at once (the client sees a reset) and touches nobody else.
 *
 * It needs CAP_NET_ADMIN (the container runs with `cap_add: NET_ADMIN`, the systemd unit has
 * it in AmbientCapabilities) and a kernel built with CONFIG_INET_DIAG_DESTROY (every mainstream
 * distribution kernel). Whether the sockets are gone is checked afterwards; when they are not,
 * the caller falls back to restarting the engine.
 */
const filterFor = (e: AccessEntry) => ['dst', isIPv6(e.host) ? `[${e.host}]` : e.host, 'dport', '=', `:${e.port}`];

/** Established TCP sockets towards this client address (0 when none or when ss is missing). */
async function count(e: AccessEntry): Promise<number> {
  const { stdout } = await run('ss', ['-tnH', 'state', 'established', ...filterFor(e)], { timeout: 5000 });
  return stdout.split('\n').filter((l) => l.trim() !== '').length;
}

/** Destroys the sockets; resolves with the number that could not be ended (0 = all gone). */
export async function destroySockets(entries: AccessEntry[]): Promise<number> {
  let left = 0;
  for (const e of entries) {
    try {
      if ((await count(e)) === 0) continue;
      await run('ss', ['-K', '-tnH', ...filterFor(e)], { timeout: 5000 }).catch(() => null);
      left += await count(e);
    } catch {
      // No ss at all: nothing can be ended this way.
      left++;
    }
  }
  return left;
}
