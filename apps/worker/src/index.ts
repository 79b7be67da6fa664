export { createWorker, type WorkerService } from './worker.ts';
