import type { AdminRole as AdminRoleName } from '@svc/db';
import { z } from 'zod';

/** What an admin may do (spec 5.4): owners manage admins, admins write, viewers read. */
export const AdminRole = z.enum(['owner', 'admin', 'viewer']) satisfies z.ZodType<AdminRoleName>;
