export { prepareBootstrap, warnUnimplementedOAuth } from './bootstrap.ts';
export { createLogger } from './logger.ts';
export { startMaintenance } from './maintenance.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
