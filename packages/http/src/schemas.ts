import { z } from '@hono/zod-openapi';
import { ProblemSchema } from './route.ts';

/** Route building blocks both REST surfaces (/api/v1, /portal/v1) declare their operations with. */

export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** Spec 4.6: "Bodies of the token pair responses carry an access token and a refresh token." */
export const TokenPairSchema = z
  .object({
    access_token: z.string(),
    refresh_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'seconds until the access token expires' }),
    refresh_expires_in: z.number().int(),
  })
  .openapi('TokenPair');

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
export const body = <T extends z.ZodType>(schema: T) => ({ body: { content: { 'application/json': { schema } } } });

/** A problem+json response, for the 4xx rows of a route's responses. */
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});
