export { prepareBootstrap, warnUnimplementedOAuth } from './bootstrap.ts';
export { runDeployable } from './deployable.ts';
export { createLogger } from './logger.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
export { createTurnBatcher, type TurnBatcherOptions } from './turn-batcher.ts';
