import { type AdminClient, BrowserSession, createAdminClient, unwrap } from '@svc/api-client';
import { API_BASE } from './paths.ts';

/** The one session and client of this tab. */
export const session = new BrowserSession(`${API_BASE}/auth`);
export const api: AdminClient = createAdminClient(API_BASE, session);
export { unwrap };
