export { createApp, createRouter, validationHook } from './app.ts';
export { OWNERS, READERS, type RouteAuth, requireAuth, WRITERS } from './auth.ts';
export { actorContext, requestMeta } from './context.ts';
export type { AppEnv } from './env.ts';
export { fieldErrors, mapError } from './errors.ts';
export { pageOf, pageQuery } from './pagination.ts';
export { type Problem, type ProblemSlug, problemBody, problemResponse, problemType } from './problem.ts';
export { defineRoute, ProblemSchema } from './route.ts';
export { createHttpService, type HttpService } from './server.ts';
