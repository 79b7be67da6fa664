/** @svc/agent: the node agent (`svc-agent`). See README.md, "Turning a server into a node". */
export { Agent, type AgentOptions } from './agent.ts';
export { Backoff, channelReconnectOptions, pushbackDelay } from './backoff.ts';
export { type EngineSettings, engineSettingsFrom } from './engine/engine-settings.ts';
export { EnrollError, type EnrollOptions, enroll } from './enroll.ts';
export type { Identity } from './identity.ts';
export { ResumableChannelCredentials, type ResumableCredentialsOptions } from './resumable-credentials.ts';
export { type SessionHandler, SyncSession } from './sync-session.ts';
