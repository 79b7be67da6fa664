export { registerPaymentWebhooks } from './ingress/payment-webhooks.ts';
export { createWorker, type WorkerOptions, type WorkerService } from './worker.ts';
