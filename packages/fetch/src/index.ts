/**
 * @keyset/fetch: API-key authentication, signed pagination and RFC 9457 problems for
 * `Request → Response` handlers (Next.js, Bun, Deno, Workers).
 * @module
 */
export { apiKey } from './api-key.ts';
export type { ApiKeyHandler, ApiKeyMiddleware, ApiKeyOptions } from './api-key.ts';
export { checkRequest } from './check-request.ts';
export type { AsyncFetchHandler, FetchHandler, FetchMiddleware } from './check-request.ts';
export { paginate, sendPage } from './paginate.ts';
export type { PaginateOptions, SendPageOptions } from './paginate.ts';
export { notFoundHandler, problemHandler, problemResponse } from './problem-handler.ts';
export type { NotFoundHandlerOptions, ProblemHandlerOptions, ProblemResponseOptions } from './problem-handler.ts';
