export { createCachedGzip } from './cached-gzip.ts';
export { parallelCompress } from './parallel-gzip.ts';
export { type ControlPlane, type ControlPlaneOptions, createControlPlane } from './server.ts';
export { startGateway } from './start.ts';
