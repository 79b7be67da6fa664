// Bulk actions over subscriptions and clients (issue 35.3, docs/integrations.md "Bulk actions").
export * from './bulk-input.ts';
export * from './bulk-job-view.ts';
export * from './queue-bulk-job.ts';
export * from './run-bulk-job.ts';
