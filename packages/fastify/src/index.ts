/**
 * @keyset/fastify: API-key authentication, signed pagination and RFC 9457 problems as a
 * Fastify 5 plugin, with typed `request.apiKey`, `request.page` and `reply.sendPage()`.
 * @module
 */
export { apiKey } from './api-key.ts';
export type { ApiKeyHook, ApiKeyOptions } from './api-key.ts';
export { checkRequest } from './check-request.ts';
export { paginate, sendPage } from './paginate.ts';
export type { PaginateHook, PaginateOptions, SendPageOptions } from './paginate.ts';
export { keyset, keyset as default, notFoundHandler, problemHandler } from './problem-handler.ts';
export type { KeysetPluginOptions, NotFoundHandlerOptions, ProblemErrorHandler, ProblemHandlerOptions, ProblemNotFoundHandler } from './problem-handler.ts';
