// The payment-provider port and its adapters.
export * from './cryptobot-adapter.ts';
export * from './cryptobot-signature.ts';
export * from './cryptobot-status.ts';
export * from './idempotency.ts';
export * from './manual-adapter.ts';
export * from './money.ts';
export * from './port.ts';
export * from './provider-errors.ts';
export * from './registry.ts';
export * from './source-cidrs.ts';
export * from './stripe-adapter.ts';
export * from './stripe-signature-time.ts';
export * from './stripe-status.ts';
export * from './yookassa-adapter.ts';
export * from './yookassa-sources.ts';
export * from './yookassa-status.ts';
