export { approveClient, rejectClient } from './change-client-status.ts';
export * from './client-fields.ts';
export * from './client-status.ts';
export * from './client-view.ts';
export * from './create-client.ts';
export * from './delete-client.ts';
export * from './read-clients.ts';
export * from './register-client.ts';
export * from './update-client.ts';
