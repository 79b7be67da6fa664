// Outbound webhooks (docs/notifications.md), exported for every surface.
export * from './create-webhook.ts';
export * from './delete-webhook.ts';
export * from './deliver-webhook.ts';
export * from './read-webhooks.ts';
export * from './test-webhook.ts';
export * from './update-webhook.ts';
export * from './webhook-envelope.ts';
export * from './webhook-fields.ts';
export * from './webhook-signature.ts';
export * from './webhook-view.ts';
