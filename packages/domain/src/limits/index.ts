// Issue 36: limits on live connections and the entitlements nodes enforce while the control plane is away (docs/limits.md).
export * from './cutoff-ingest.ts';
export * from './enforcement.ts';
export * from './limit-fields.ts';
export * from './traffic-slices.ts';
