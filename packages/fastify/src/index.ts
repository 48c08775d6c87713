/**
 * @keyset/fastify: keyset's API-key authentication, signed pagination and RFC 9457
 * problems as a Fastify 5 plugin, with typed `request.apiKey`, `request.page` and
 * `reply.sendPage()`.
 * @module
 */
export { apiKey } from './api-key.ts';
export type { ApiKeyHook, ApiKeyOptions } from './api-key.ts';
export { paginate, sendPage } from './paginate.ts';
export type { PaginateHook, PaginateOptions, SendPageOptions } from './paginate.ts';
export { keyset, keyset as default } from './plugin.ts';
export type { KeysetPluginOptions } from './plugin.ts';
export { notFoundHandler, problemHandler } from './problem-handler.ts';
export type { NotFoundHandlerOptions, ProblemErrorHandler, ProblemHandlerOptions, ProblemNotFoundHandler } from './problem-handler.ts';
