export { ADMIN_BASE, createAdminApi } from './app.ts';
export { ADMIN_WEB_PATH, registerAdminWeb } from './web.ts';
