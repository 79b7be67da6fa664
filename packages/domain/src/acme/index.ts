// Use cases of this feature, exported for every surface.
export * from './acme-account-view.ts';
export * from './acme-port.ts';
export * from './answer-visibility.ts';
export * from './check-dns-provider.ts';
export * from './create-acme-account.ts';
export * from './create-dns-provider.ts';
export * from './delete-acme-account.ts';
export * from './delete-dns-provider.ts';
export * from './dns/index.ts';
export * from './dns-provider-fields.ts';
export * from './dns-provider-kinds.ts';
export * from './dns-provider-view.ts';
export * from './read-acme-accounts.ts';
export * from './read-dns-providers.ts';
export * from './register-acme-account.ts';
export * from './update-dns-provider.ts';
