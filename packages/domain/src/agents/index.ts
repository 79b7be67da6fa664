// The agent side of the control plane: what the gateway does with a Sync stream, and what the
// admin API asks of agents through it.
export * from './adopt-engines.ts';
export * from './agent-commands.ts';
export * from './agent-reports.ts';
export * from './agent-upgrades.ts';
export * from './agent-version.ts';
export * from './engine-capabilities.ts';
export * from './gateway-replicas.ts';
export * from './log-tails.ts';
export * from './node-presence.ts';
export * from './record-applied-revisions.ts';
export * from './record-apply-failure.ts';
export * from './renew-agent-certificate.ts';
export * from './stream-admission.ts';
export { COUNTER_CEILING } from './usage-bounds.ts';
export * from './usage-fold.ts';
export * from './usage-ingest.ts';
