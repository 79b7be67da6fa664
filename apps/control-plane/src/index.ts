export { type ControlPlane, type ControlPlaneOptions, createControlPlane } from './server.ts';
export { startGateway } from './start.ts';
