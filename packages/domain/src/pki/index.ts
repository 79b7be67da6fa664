export * from './ca-store.ts';
export * from './internal-ca.ts';
