// Use cases of this feature, exported for every surface.
export * from './chain-view.ts';
export * from './create-chain.ts';
export * from './delete-chain.ts';
export * from './hops.ts';
export * from './inbound-fits-chain.ts';
export * from './read-chains.ts';
export * from './update-chain.ts';
