// Use cases of this feature, exported for every surface.
export * from './config-fields.ts';
export * from './create-payment-provider.ts';
export * from './create-plan.ts';
export * from './delete-payment-provider.ts';
export * from './delete-plan.ts';
export * from './payment-provider-fields.ts';
export * from './payment-provider-view.ts';
export * from './plan-fields.ts';
export * from './plan-view.ts';
export * from './provider-kinds.ts';
export * from './providers/index.ts';
export * from './read-payment-providers.ts';
export * from './read-payments.ts';
export * from './read-plans.ts';
export * from './update-payment-provider.ts';
export * from './update-plan.ts';
