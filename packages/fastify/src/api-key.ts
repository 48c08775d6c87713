/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `request.apiKey`.
 * Register it as an `onRequest` hook: it then runs before Fastify reads the body, so a
 * caller without a valid key never gets a body parsed (or a 400 for a malformed one).
 * @module
 */
import { ConfigError, apiKeyCheckOptions, isPromiseLike, maybeSyncVariant } from '@keyset/core';
import type { ApiKeyGuard } from '@keyset/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { guardUrl } from './internal/request-url.ts';

/** Options of `apiKey()`. */
export interface ApiKeyOptions {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /**
   * Scopes the key must hold; a key without one of them gets 403 `insufficient_scope`.
   * @default [] (any valid key)
   */
  scopes?: readonly string[];
  /**
   * Credits a request to this route spends from the key's usage quota (keys without a
   * quota spend nothing): an integer from 0 (free) to 1,000,000. Rate limits count
   * requests, whatever their cost.
   * @default 1
   */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
}

/** A Fastify hook (`onRequest`, or `preHandler`) that authenticates the request. */
export type ApiKeyHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * A hook that refuses the request unless it carries a valid API key with `scopes`.
 * Errors are the core's problems (400, 401, 403, 429, 503), thrown to the error handler;
 * the `RateLimit` headers go on every response of an authenticated request, errors
 * included.
 *
 * @example
 * ```ts
 * app.get('/orders', { onRequest: apiKey({ guard, scopes: ['orders:read'] }) }, async (request) => ({ caller: request.apiKey.name }));
 * ```
 */
export function apiKey(options: ApiKeyOptions): ApiKeyHook {
  const { guard, scopes, cost, route } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  const checkOptions = apiKeyCheckOptions({
    ...(scopes === undefined ? {} : { scopes }),
    ...(cost === undefined ? {} : { cost }),
    ...(route === undefined ? {} : { route }),
  });
  return async function apiKey(request, reply) {
    // The socket's peer and the raw header; the guard's `trustProxy` decides what to
    // believe. Fastify's own `request.ip` (its `trustProxy` setting) is deliberately unused:
    // one policy, in core, for every adapter.
    const guardRequest = {
      authorization: request.headers.authorization,
      url: guardUrl(request),
      remoteAddress: request.raw.socket?.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
    };
    // The guard's synchronous twin when it has one (warm cache, memory store): no promise to wait for.
    const fast = maybeSyncVariant(guard.check);
    const result = fast !== undefined ? fast(guardRequest, checkOptions) : guard.check(guardRequest, checkOptions);
    const { key, headers } = isPromiseLike(result) ? await result : result;
    request.apiKey = key;
    reply.headers(headers);
  };
}
