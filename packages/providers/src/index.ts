/**
 * The vendor clients, outside the domain (issue 33): each speaks a vendor's API behind a port
 * the domain declares, through the outbound client it is given. The runtime builds `vendors`
 * from here and hands them to the domain (DomainDeps.vendors); a new provider is one new file
 * here, tested against its stand-in without a database.
 */
import type { Vendors } from '@svc/domain';
import { paymentProviderAdapter } from './payments/registry.ts';

export * from './payments/cryptobot-adapter.ts';
export * from './payments/cryptobot-signature.ts';
export * from './payments/cryptobot-status.ts';
export * from './payments/idempotency.ts';
export * from './payments/manual-adapter.ts';
export * from './payments/provider-http.ts';
export * from './payments/registry.ts';
export * from './payments/stripe-adapter.ts';
export * from './payments/stripe-signature-time.ts';
export * from './payments/stripe-status.ts';
export * from './payments/webhook-input.ts';
export * from './payments/yookassa-adapter.ts';
export * from './payments/yookassa-status.ts';

/** Every family's factory, as the domain takes them. */
export const createVendors = (): Vendors => ({ paymentProvider: paymentProviderAdapter });
