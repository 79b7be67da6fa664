// Use cases of this feature, exported for every surface.
export * from './overview.ts';
