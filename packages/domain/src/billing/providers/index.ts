// The payment-provider port; its adapters (Stripe, CryptoBot, YooKassa, manual) are vendor
// clients in @svc/providers, built by the runtime and handed to the domain (DomainDeps.vendors).
export * from './money.ts';
export * from './port.ts';
export * from './provider-errors.ts';
export * from './source-cidrs.ts';
export * from './yookassa-sources.ts';
