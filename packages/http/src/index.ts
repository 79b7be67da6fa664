export { acceptsGzip } from './accept-encoding.ts';
export { createApp, createRouter, validationHook } from './app.ts';
export { OWNERS, READERS, type RouteAuth, requireAuth, WRITERS } from './auth.ts';
export { type BindingCookie, cookieValues, setBindingCookie } from './binding-cookie.ts';
export { limitBody, OWN_BODY_LIMIT } from './body-limit.ts';
export { actorContext, requestMeta } from './context.ts';
export { DOCS_CSP, registerDocsUi } from './docs-ui.ts';
export type { AppEnv } from './env.ts';
export { mapError } from './errors.ts';
export { withFastPath } from './fast-listener.ts';
export { type FastPath, type FastRequest, type PreparedAnswer, prepareAnswer, prepareProblem } from './fast-path.ts';
export { OAuthIdentitySchema, type OAuthRouteOptions, registerOAuthRoutes } from './oauth-routes.ts';
export { registerOpenApiDocument, withOperationIds } from './openapi-document.ts';
export { openapi } from './openapi-metadata.ts';
export { listPageOf, listQuery, pageOf, pageQuery, signedPage, verifyCursor } from './pagination.ts';
export { type Problem, type ProblemSlug, problemBody, problemResponse, problemType } from './problem.ts';
export { redactPath } from './redact.ts';
export { textRuleOnJsonBody, textRuleOnUrlAndHeaders } from './request-text.ts';
export { defineRoute, ProblemSchema } from './route.ts';
export { body, IdParam, json, problem, TokenPairSchema } from './schemas.ts';
export { createHttpService, type HttpService } from './server.ts';
export {
  answerTokens,
  clearRefreshCookie,
  refreshTokenFromCookie,
  SessionModeQuery,
  SessionTokensSchema,
  setRefreshCookie,
  wantsCookieSession,
} from './session-cookie.ts';
export { publicPrefixOf, registerWebApp, WEB_APP_CSP, type WebAppOptions, webAppDir } from './web-app.ts';
