export { createWorker, type WorkerOptions, type WorkerService } from './worker.ts';
