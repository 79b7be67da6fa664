export * from './portal-catalogue.ts';
export * from './portal-client.ts';
export * from './portal-password.ts';
export * from './portal-subscriptions.ts';
export * from './portal-views.ts';
