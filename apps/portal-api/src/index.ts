export { createPortalApi, type PortalApi } from './app.ts';
