/**
 * @keyset/hono: keyset's API-key authentication, signed pagination and RFC 9457 problems
 * as Hono middleware, with typed context variables (`c.var.apiKey`, `c.var.page`).
 * @module
 */
export { apiKey } from './api-key.ts';
export type { ApiKeyOptions } from './api-key.ts';
export { checkRequest } from './check-request.ts';
export { paginate, sendPage } from './paginate.ts';
export type { PageContext, PaginateOptions, SendPageOptions } from './paginate.ts';
export { notFoundHandler, problemHandler } from './problem-handler.ts';
export type { NotFoundHandlerOptions, ProblemHandlerOptions } from './problem-handler.ts';
