import { join } from 'node:path';
import type { NodeConfig } from '@svc/proto';
import { readOptional, writeFileAtomic } from '../state-files.ts';

/**
 * What the engine is given of a desired configuration: every inbound's users but the withheld
 * ones (users the agent cut, entitlement-enforcer.ts), and no UserLimits (the engine has no use
 * for them, and a change of limits alone, e.g. a new slice, must not look like a change of the
 * engine's configuration: change-plan.ts would restart the engine for it).
 */
export function engineView(config: NodeConfig, withheld: ReadonlySet<string>): NodeConfig {
  const xray = config.xray;
  if (withheld.size === 0 || !xray) return config.userLimits.length === 0 ? config : { ...config, userLimits: [] };
  return {
    ...config,
    userLimits: [],
    xray: {
      ...xray,
      inbounds: xray.inbounds.map((i) =>
        i.users.some((u) => withheld.has(u.email)) ? { ...i, users: i.users.filter((u) => !withheld.has(u.email)) } : i,
      ),
    },
  };
}

/**
 * The users left out of the engine as of the last apply, on disk beside applied.bin and written
 * after it, by the same rule: it may only lag what the engine has. A restarted agent compares
 * against it, so an apply cut short by a crash is done again (a removal or an addition the
 * engine already has is tolerated), never skipped.
 */
const file = (stateDir: string) => join(stateDir, 'entitlements', 'engine-withheld.json');

export async function loadEngineWithheld(stateDir: string): Promise<ReadonlySet<string>> {
  const text = await readOptional(file(stateDir));
  if (text === null) return new Set();
  try {
    const v = JSON.parse(text) as unknown;
    return new Set(Array.isArray(v) ? v.filter((e): e is string => typeof e === 'string') : []);
  } catch {
    return new Set();
  }
}

export async function saveEngineWithheld(stateDir: string, withheld: ReadonlySet<string>): Promise<void> {
  await writeFileAtomic(file(stateDir), JSON.stringify([...withheld].sort()));
}
