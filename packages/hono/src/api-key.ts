/**
 * `apiKey()` authenticates the request with core's guard and exposes the key as `c.var.apiKey`.
 * @module
 */
import { apiKeyCheckOptions, assertKnownOptions, finishWebResponse, type KnownOptions, webGuardRequest } from '@keyset/core/adapter';
import { ConfigError, type ApiKeyGuard, type PermissionQuery, type VerifiedKey } from '@keyset/core';
import type { Context, MiddlewareHandler } from 'hono';
import { nodeSocketAddress } from './check-request.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
    apiKey: VerifiedKey;
    /** The guard's headers for this request (`RateLimit`…), set by `apiKey()`: `sendPage()` builds its page with them. */
    guardHeaders: Readonly<Record<string, string>>;
  }
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Options of `apiKey()`. */
export interface ApiKeyOptions {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /** Scopes the key must hold, else 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** Permissions the key must hold beside `scopes`, as a query: `{ or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] }`, else 403 `insufficient_scope`. @default none */
  permissions?: PermissionQuery;
  /** Credits this route spends from the key's quota, an integer 0 to 1,000,000 (rate limits count requests). @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
  /** The socket's peer (IP allowlists, refused-credential budgets), never a header: off Node, `(c) => getConnInfo(c).remote.address`. @default the `@hono/node-server` socket's, else unknown */
  clientAddress?: (c: Context) => string | null | undefined;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, permissions: true, cost: true, route: true, clientAddress: true } as const satisfies KnownOptions<ApiKeyOptions>;

/**
 * Middleware that admits a request with a valid API key holding `scopes`. The guard's
 * refusal (core's 400/401/403/429/503 `KeysetError`) is thrown as it is, for
 * `app.onError(problemHandler())` to answer; an admitted request's response gets the
 * guard's `RateLimit` headers, and its in-flight lease ends with that response.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, limiter });
 * app.get('/orders', apiKey({ guard, scopes: ['orders:read'] }), (c) => c.json({ caller: c.var.apiKey.name }));
 * ```
 */
export function apiKey(options: ApiKeyOptions): MiddlewareHandler {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, clientAddress = nodeSocketAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (c) => address');
  const checkOptions = apiKeyCheckOptions(options);
  return async function apiKey(c, next) {
    const admitted = await guard.check(webGuardRequest(c.req.raw, clientAddress(c)), checkOptions);
    c.set('apiKey', admitted.key);
    c.set('guardHeaders', admitted.headers);
    try {
      // Hono answers an `Error` thrown below through the app's error handler, so next()
      // rejects only for a thrown non-`Error` or an error handler that throws.
      await next();
    } catch (error) {
      admitted.release?.();
      throw error;
    }
    // A page `sendPage()` built with these very headers needs only the lease: looking for
    // them would turn its header record into a `Headers` object on @hono/node-server, which
    // checks every character of the `Link` value (about 2 µs a page in `bench inprocess-ab`).
    const { headers, release } = admitted;
    const carried = c.get('sentPage') === c.res && c.get('guardHeaders') === headers;
    const res = finishWebResponse(c.req.method, c.res, carried ? { headers: NO_HEADERS, ...(release && { release }) } : admitted);
    // Hono's documented way to replace the response after next() (assigning `c.res`, as
    // its own etag middleware does): only when the headers or the lease need it.
    if (res !== c.res) c.res = res;
  };
}
