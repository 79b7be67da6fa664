export { createPortalApi } from './app.ts';
