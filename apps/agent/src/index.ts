/** @svc/agent: the node agent (`svc-agent`). See README.md, "Turning a server into a node". */
export { Agent, type AgentOptions } from './agent.ts';
export { enroll, EnrollError, type EnrollOptions } from './enroll.ts';
export { engineSettingsFrom, type EngineSettings } from './engine/engine-settings.ts';
