/** @svc/agent: the node agent (`svc-agent`). See README.md, "Turning a server into a node". */
export { Agent, type AgentOptions } from './agent.ts';
export { type EngineSettings, engineSettingsFrom } from './engine/engine-settings.ts';
export { EnrollError, type EnrollOptions, enroll } from './enroll.ts';
