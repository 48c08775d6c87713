/**
 * @keyset/express: keyset's API-key authentication, signed pagination and RFC 9457
 * problems as Express 5 middleware, with typed `res.locals.apiKey` and `res.locals.page`.
 * @module
 */
export { apiKey } from './api-key.ts';
export type { ApiKeyOptions } from './api-key.ts';
export { checkRequest } from './check-request.ts';
export { paginate, sendPage } from './paginate.ts';
export type { PaginateOptions, SendPageOptions } from './paginate.ts';
export { notFoundHandler, problemHandler } from './problem-handler.ts';
export type { NotFoundHandlerOptions, ProblemHandlerOptions } from './problem-handler.ts';
