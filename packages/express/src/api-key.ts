/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `res.locals.apiKey`.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, type KnownOptions, nodeGuardRequest, releaseWhenClosed } from '@keyset/core/adapter';
import type { ApiKeyGuard, VerifiedKey, PermissionQuery } from '@keyset/core';
import type { Request, RequestHandler } from 'express';

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
  /** Permissions the key must hold beside `scopes`, as a query: `{ or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] }`, else 403 `insufficient_scope`. @default none */
  permissions?: PermissionQuery;
  /**
   * Credits a request to this route spends from the key's usage quota (keys without a
   * quota spend nothing): an integer from 0 (free) to 1,000,000. Rate limits count
   * requests, whatever their cost.
   * @default 1
   */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
  /**
   * The socket's peer (IP allowlists, refused-credential budgets), never a header: the
   * guard's `trustProxy` decides what `X-Forwarded-For` is believed, one policy for every
   * adapter (Express's `req.ip` and its `trust proxy` setting are not used).
   * @default the socket's peer, `req.socket.remoteAddress`
   */
  clientAddress?: (req: Request) => string | null | undefined;
}

/** Every name `ApiKeyOptions` knows, checked when the middleware is made. */
const API_KEY_OPTIONS = { guard: true, scopes: true, permissions: true, cost: true, route: true, clientAddress: true } as const satisfies KnownOptions<ApiKeyOptions>;

/**
 * Middleware that admits a request with a valid API key holding `scopes`. The guard's
 * refusal (core's 400/401/403/429/503 `KeysetError`) goes to `next(error)`, for
 * `problemHandler()` to answer; the `RateLimit` headers go on every response of an
 * admitted request, errors included.
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
  const { guard, clientAddress = socketPeer } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (req) => address');
  const checkOptions = apiKeyCheckOptions(options);
  // Express 5 passes a rejection to `next(error)`, as it does a throw: a refusal goes to the
  // error handlers as the guard threw it.
  return async function apiKey(req, res, next) {
    // The target as sent (`originalUrl`): the guard looks for keys in its query string.
    const { key, headers, release } = await guard.check(nodeGuardRequest(req, req.originalUrl, clientAddress(req)), checkOptions);
    // The in-flight lease ends with the response: sent, answered by an error handler, or the client gone.
    releaseWhenClosed(res, release);
    res.locals.apiKey = key;
    res.set(headers);
    next();
  };
}

const socketPeer = (req: Request): string | undefined => req.socket.remoteAddress;
