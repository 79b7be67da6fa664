import { timingSafeEqual } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { COUNT_EXACT_UP_TO, type ListSpec, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, type Page } from '@svc/domain';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import { problemResponse } from './problem.ts';

/**
 * Page cursors are tamper-evident (docs/architecture.md, HTTP): the domain's cursor (the last
 * id, opaque) goes out as `<cursor>.<tag>`, the tag an HMAC under a key derived from the
 * installation key for this purpose (Sealer.mac). A cursor whose tag does not verify (made by
 * hand, edited, from another installation) is a 400 before the list runs; the zod schema then
 * hands the domain the cursor without its tag.
 */
const CURSOR_PURPOSE = 'page-cursor';

/** `limit` (1..200, default 50) and `cursor`: spread into a route's query schema. */
export const pageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_LIMIT_MAX)
    .default(PAGE_LIMIT_DEFAULT)
    .openapi({ description: `Page size, 1-${PAGE_LIMIT_MAX}` }),
  cursor: z
    .string()
    .max(512)
    .optional()
    .transform((cursor) => (cursor === undefined ? undefined : cursor.slice(0, Math.max(0, cursor.lastIndexOf('.')))))
    .openapi({ description: 'next_cursor of the previous page, as given' }),
};

export const pageOf = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable() }).openapi(name);

/**
 * `q` and `sort` of a searchable list (issue 30 item 6), spread into its query schema with
 * pageQuery: `sort` is one of the list's ListSpec keys, `-` before it for descending.
 */
export const listQuery = (spec: ListSpec, q: string) => {
  const keys = ['created', ...Object.keys(spec.sorts)];
  const values = keys.flatMap((k) => [k, `-${k}`]) as [string, ...string[]];
  return {
    q: z.string().max(200).optional().openapi({ description: q }),
    sort: z
      .enum(values)
      .optional()
      .openapi({ description: `Sort key, \`-\` before it for descending; default \`${spec.defaultSort}\`. A cursor belongs to its sort.` }),
  };
};

/** A page of a searchable list: pageOf with the first page's total, exact or estimated. */
export const listPageOf = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      items: z.array(item),
      next_cursor: z.string().nullable(),
      total: z
        .number()
        .int()
        .nullable()
        .openapi({
          description: `On the first page (no cursor): the rows matching the filters, counted up to ${COUNT_EXACT_UP_TO} and the database's estimate beyond; null on later pages`,
        }),
      total_exact: z.boolean().nullable().openapi({ description: 'true when `total` was counted, false when it is an estimate' }),
    })
    .openapi(name);

/** The page with its next_cursor tagged: what every list route answers. */
export function signedPage<P extends Page<unknown>>(c: Context<AppEnv>, page: P): P {
  if (page.next_cursor === null) return page;
  return { ...page, next_cursor: `${page.next_cursor}.${c.get('deps').secrets.mac(CURSOR_PURPOSE, page.next_cursor)}` };
}

/** Route middleware (defineRoute adds it where the query has a cursor): refuses a cursor we did not tag. */
export const verifyCursor: MiddlewareHandler<AppEnv> = async (c, next) => {
  const cursor = c.req.query('cursor');
  if (cursor !== undefined && cursor !== '') {
    const dot = cursor.lastIndexOf('.');
    const expected = dot > 0 ? c.get('deps').secrets.mac(CURSOR_PURPOSE, cursor.slice(0, dot)) : '';
    const given = Buffer.from(cursor.slice(dot + 1));
    if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) {
      return problemResponse(c, 'validation', 'the request query is invalid', { 'query.cursor': 'not a cursor this API issued' });
    }
  }
  await next();
};
