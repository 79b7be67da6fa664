export { ADMIN_BASE, createAdminApi } from './app.ts';
export type { AdminPageBody } from './routes/admins/list.ts';
export type { AuditPageBody } from './routes/audit-log/list.ts';
export type { AuthMethods } from './routes/auth/methods.ts';
