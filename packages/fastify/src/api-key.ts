/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `request.apiKey`.
 * Register it as an `onRequest` hook: it then runs before Fastify reads the body, so a
 * caller without a valid key never gets a body parsed (or a 400 for a malformed one).
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, type KnownOptions, maybeSyncVariant } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult } from '@keyset/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

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

/** Every name `ApiKeyOptions` knows, checked when the middleware is made. */
const API_KEY_OPTIONS = { guard: true, scopes: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

/**
 * A Fastify hook (`onRequest`, or `preHandler`) that authenticates the request. Fastify
 * calls it with `done`, so it finishes without a promise (no microtask hop) when the guard
 * answers synchronously; called with two arguments, it returns a promise.
 */
export interface ApiKeyHook {
  (request: FastifyRequest, reply: FastifyReply): Promise<void>;
  (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void;
}

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
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, scopes, cost, route } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  const checkOptions = apiKeyCheckOptions({
    ...(scopes === undefined ? {} : { scopes }),
    ...(cost === undefined ? {} : { cost }),
    ...(route === undefined ? {} : { route }),
  });
  // A native Promise when the answer has to wait (a twin that waits answers with one; a
  // guard without a twin is awaited), so `instanceof Promise` tells the answers apart
  // without reading `then` from result objects of every shape.
  const check = (request: FastifyRequest): ApiKeyGuardResult | Promise<ApiKeyGuardResult> => {
    // The socket's peer and the raw header; the guard's `trustProxy` decides what to
    // believe. Fastify's own `request.ip` (its `trustProxy` setting) is deliberately unused:
    // one policy, in core, for every adapter.
    const guardRequest = {
      // Every `Authorization` line (Node keeps only the first in `headers`): the guard
      // refuses more than one set of credentials (core's `singleAuthorization`).
      authorization: request.raw.headersDistinct.authorization,
      // Never credentials: only for a precise 401 (`unsupported_auth_scheme`, not "missing").
      xApiKey: request.headers['x-api-key'],
      // Path and query as sent: the guard only looks for keys in the query string.
      url: request.raw.url,
      remoteAddress: request.raw.socket?.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
    };
    // The guard's synchronous twin when it has one (warm cache, memory store): no promise to wait for.
    const fast = maybeSyncVariant(guard.check);
    return fast !== undefined ? fast(guardRequest, checkOptions) : Promise.resolve(guard.check(guardRequest, checkOptions));
  };
  // Not `async`: Fastify passes `done`, and a synchronous answer then costs no promise.
  // A throw reaches Fastify's error handler either way (its hook runner catches it, as it
  // does a rejection).
  function apiKey(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  function apiKey(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void;
  function apiKey(request: FastifyRequest, reply: FastifyReply, done?: HookHandlerDoneFunction): Promise<void> | void {
    if (typeof done !== 'function') {
      // Called by hand (`await hook(request, reply)`): a promise, as an async hook gives.
      try {
        const result = check(request);
        return result instanceof Promise ? result.then((passed) => admit(request, reply, passed)) : Promise.resolve(admit(request, reply, result));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const result = check(request);
    // Waiting: the promise goes back to Fastify, which treats it as an async hook's (a
    // rejection without a reason still stops the request); `done(undefined)` would go on.
    if (result instanceof Promise) return result.then((passed) => admit(request, reply, passed));
    admit(request, reply, result);
    done();
  }
  return apiKey;
}

function admit(request: FastifyRequest, reply: FastifyReply, { key, headers, release }: ApiKeyGuardResult): void {
  request.apiKey = key;
  // Given back by the keyset plugin's onResponse and onRequestAbort hooks.
  (request as unknown as LeaseSlot)[LEASE] = release ?? null;
  reply.headers(headers);
}

/** Where `apiKey()` leaves the request's in-flight lease for the plugin's hooks (a request decoration). */
export const LEASE: unique symbol = Symbol('keyset.lease');
/** A request with its lease slot. */
export interface LeaseSlot {
  [LEASE]: (() => void) | null;
}

/** Gives the request's lease back (both hooks call it; the second call does nothing). */
export function releaseLease(request: FastifyRequest): void {
  (request as unknown as LeaseSlot)[LEASE]?.();
}
