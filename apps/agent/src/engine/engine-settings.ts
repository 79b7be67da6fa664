/**
 * Which engine the agent runs and how it speaks to it. SVC_AGENT_ENGINE_BIN (default `xray` on
 * PATH) is the binary; SVC_AGENT_ENGINE_API is its flavour: `xray` (default) or `v2ray` for
 * v2ray-core 4.x, which differ in command line, gRPC API package prefix (`xray.` and
 * `v2ray.core.`) and Shadowsocks cipher numbers. SVC_AGENT_ENGINE_API_PREFIX overrides the prefix
 * (a fork that renamed its packages).
 */
export type EngineFlavour = 'xray' | 'v2ray';

export interface EngineSettings {
  bin: string;
  flavour: EngineFlavour;
  /** gRPC package prefix of the engine's API, with the trailing dot. */
  apiPrefix: string;
}

export const DEFAULT_PREFIX: Record<EngineFlavour, string> = { xray: 'xray.', v2ray: 'v2ray.core.' };

export function engineSettingsFrom(env: NodeJS.ProcessEnv): EngineSettings {
  const flavour = (env.SVC_AGENT_ENGINE_API ?? 'xray').trim();
  if (flavour !== 'xray' && flavour !== 'v2ray')
    throw new Error(`SVC_AGENT_ENGINE_API must be xray or v2ray, not ${JSON.stringify(flavour)}`);
  const prefix = env.SVC_AGENT_ENGINE_API_PREFIX?.trim();
  if (prefix !== undefined && prefix !== '' && !/^([a-z][a-z0-9_]*\.)+$/.test(prefix))
    throw new Error(`SVC_AGENT_ENGINE_API_PREFIX must be a package prefix ending in a dot (like "xray."), not ${JSON.stringify(prefix)}`);
  return { bin: env.SVC_AGENT_ENGINE_BIN?.trim() || 'xray', flavour, apiPrefix: prefix || DEFAULT_PREFIX[flavour] };
}

/** The engine's command lines: run a config, test one, print the version. */
export const engineArgs = {
  run: (f: EngineFlavour, config: string) => (f === 'xray' ? ['run', '-c', config] : ['-config', config]),
  test: (f: EngineFlavour, config: string) => (f === 'xray' ? ['run', '-test', '-c', config] : ['-test', '-config', config]),
  version: (f: EngineFlavour) => (f === 'xray' ? ['version'] : ['-version']),
};
