import { z } from '@hono/zod-openapi';

type OpenApiArgs = Parameters<z.ZodString['openapi']>;

/**
 * `.openapi(...)` for a schema made outside this package: a domain input schema. zod copies
 * methods onto each schema when it is made, so a schema made before @hono/zod-openapi extended
 * zod (the domain loads first) has no `.openapi` of its own; this applies the same extension to
 * it. The result is a copy with the OpenAPI metadata (a component name, descriptions); the
 * domain's schema, and the rules it parses by, are unchanged.
 */
export function openapi<T extends z.ZodType>(schema: T, ...args: OpenApiArgs): T {
  const extend = (z.ZodType.prototype as unknown as { openapi: (...a: OpenApiArgs) => T }).openapi;
  return extend.apply(schema, args);
}
