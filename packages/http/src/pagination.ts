import { z } from '@hono/zod-openapi';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '@svc/domain';

/** `limit` (1..200, default 50) and `cursor`: spread into a route's query schema. */
export const pageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_LIMIT_MAX)
    .default(PAGE_LIMIT_DEFAULT)
    .openapi({ description: `Page size, 1-${PAGE_LIMIT_MAX}` }),
  cursor: z.string().max(512).optional().openapi({ description: 'next_cursor of the previous page' }),
};

export const pageOf = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable() }).openapi(name);
