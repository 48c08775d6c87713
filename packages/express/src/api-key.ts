/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `res.locals.apiKey`.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult, VerifiedKey } from '@keyset/core';
import type { NextFunction, RequestHandler, Response } from 'express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its locals this way.
  namespace Express {
    interface Locals {
      /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
      apiKey: VerifiedKey;
    }
  }
}

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
 * Middleware that refuses the request unless it carries a valid API key with `scopes`.
 * Errors are the core's problems (400, 401, 403, 429, 503) for `problemHandler()`; the
 * `RateLimit` headers go on every response of an authenticated request, errors included.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, limiter });
 * app.get('/orders', apiKey({ guard, scopes: ['orders:read'] }), (req, res) => {
 *   res.json({ caller: res.locals.apiKey.name });
 * });
 * ```
 */
export function apiKey(options: ApiKeyOptions): RequestHandler {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, scopes, cost, route } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  const checkOptions = apiKeyCheckOptions({
    ...(scopes === undefined ? {} : { scopes }),
    ...(cost === undefined ? {} : { cost }),
    ...(route === undefined ? {} : { route }),
  });
  // Not `async`: Express 5 passes a synchronous throw and a rejected promise alike to `next(error)`.
  return function apiKey(req, res, next) {
    // The socket's peer and the raw header; the guard's `trustProxy` decides what to
    // believe. Express's own `req.ip` (its `trust proxy` setting) is deliberately unused:
    // one policy, in core, for every adapter.
    const request = {
      // Every `Authorization` line (Node keeps only the first in `req.headers`): the guard
      // refuses more than one set of credentials (core's `singleAuthorization`).
      authorization: req.headersDistinct.authorization,
      // Never credentials: only for a precise 401 (`unsupported_auth_scheme`, not "missing").
      xApiKey: req.headers['x-api-key'],
      // Path and query as sent: the guard only looks for keys in the query string.
      url: req.originalUrl,
      remoteAddress: req.socket.remoteAddress,
      forwardedFor: req.headers['x-forwarded-for'],
    };
    return guard.check(request, checkOptions).then((passed) => admit(res, next, passed));
  };
}

function admit(res: Response, next: NextFunction, { key, headers, release }: ApiKeyGuardResult): void {
  // The in-flight lease ends with the response: 'close' follows the last byte sent, a
  // handler's error answered by problemHandler(), and a client that went away.
  if (release !== undefined) res.on('close', release);
  res.locals.apiKey = key;
  res.set(headers);
  next();
}
