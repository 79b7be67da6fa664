// Checkout, provider webhooks, the payment state machine and what a payment buys (docs/payments.md).
export * from './admin-payments.ts';
export * from './checkout.ts';
export * from './checkout-at-provider.ts';
export * from './checkout-view.ts';
export * from './payment-effect.ts';
export * from './payment-mails.ts';
export * from './payment-transition.ts';
export * from './payment-webhook.ts';
export * from './portal-payments.ts';
export * from './process-payment-event.ts';
export * from './provider-port.ts';
export * from './recheck-payments.ts';
export * from './recheck-schedule.ts';
export * from './reported-payment.ts';
export * from './revenue.ts';
export * from './settle-payment.ts';
