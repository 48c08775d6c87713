/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `c.var.apiKey`.
 * @module
 */
import { ConfigError, isValidScope } from '@keyset/core';
import type { ApiKeyGuard, VerifiedKey } from '@keyset/core';
import type { Context, MiddlewareHandler } from 'hono';

declare module 'hono' {
  interface ContextVariableMap {
    /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
    apiKey: VerifiedKey;
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
}

/**
 * Middleware that refuses the request unless it carries a valid API key with `scopes`.
 * Errors are the core's problems (400, 401, 403, 429, 503); the `RateLimit` headers go on
 * every response of an authenticated request, errors included.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, limiter });
 * app.get('/orders', apiKey({ guard, scopes: ['orders:read'] }), (c) => c.json({ caller: c.var.apiKey.name }));
 * ```
 */
export function apiKey(options: ApiKeyOptions): MiddlewareHandler {
  const { guard, scopes = [] } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (!Array.isArray(scopes) || !scopes.every(isValidScope)) {
    throw new ConfigError(`apiKey() scopes must be scope tokens such as 'orders:read', got ${JSON.stringify(scopes)}`);
  }
  const checkOptions = Object.freeze({ scopes: Object.freeze([...scopes]) });
  return async function apiKey(c, next) {
    const { key, headers } = await guard.check({ authorization: c.req.header('authorization'), url: c.req.url }, checkOptions);
    c.set('apiKey', key);
    setHeaders(c, headers);
    await next();
    // A handler may return a Response of its own, which drops headers set before it ran.
    setHeaders(c, headers, true);
  };
}

function setHeaders(c: Context, headers: Readonly<Record<string, string>>, onlyMissing = false): void {
  // `for…in` over the guard's plain record: no entries array per request.
  const present = onlyMissing ? c.res.headers : undefined;
  for (const name in headers) {
    if (present === undefined || !present.has(name)) c.header(name, headers[name] as string);
  }
}
