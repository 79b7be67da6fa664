export { prepareBootstrap, warnUnimplementedOAuth } from './bootstrap.ts';
export { createLogger } from './logger.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
export { startWorker } from './worker.ts';
