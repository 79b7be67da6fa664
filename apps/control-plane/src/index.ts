export { type ControlPlaneOptions, createControlPlane } from './server.ts';
