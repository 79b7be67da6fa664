export { prepareBootstrap } from './bootstrap.ts';
export { runDeployable } from './deployable.ts';
export { createLogger } from './logger.ts';
export { createMailer } from './mail/create-mailer.ts';
export { outboxFileName } from './mail/outbox-mailer.ts';
export { startMetricsListener } from './metrics-listener.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
export { createTurnBatcher, type TurnBatcherOptions } from './turn-batcher.ts';
