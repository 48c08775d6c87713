/**
 * `apiKey()` authenticates the request with the core guard (`Authorization: ApiKey …`,
 * scopes, per-key rate limit) and exposes the verified key as `c.var.apiKey`.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, guardReadsForwardedFor, type KnownOptions, maybeSyncVariant, releaseWithBody } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult, VerifiedKey } from '@keyset/core';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { nodeSocketAddress } from './check-request.ts';

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
  /**
   * The socket's peer address (keys with an IP allowlist need it). On `@hono/node-server`
   * it is read from the connection; on other runtimes pass their conninfo, e.g.
   * `(c) => getConnInfo(c).remote.address` from `hono/bun` or `hono/deno`. Return the
   * SOCKET's peer, never a header: `X-Forwarded-For` is read by the guard, and only under
   * its `trustProxy` setting.
   * @default the Node socket's `remoteAddress`, else unknown
   */
  clientAddress?: (c: Context) => string | null | undefined;
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
const API_KEY_OPTIONS = { guard: true, scopes: true, clientAddress: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

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
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, scopes, cost, route, clientAddress = nodeSocketAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (c) => address');
  const checkOptions = apiKeyCheckOptions({
    ...(scopes === undefined ? {} : { scopes }),
    ...(cost === undefined ? {} : { cost }),
    ...(route === undefined ? {} : { route }),
  });
  // A guard that says it never reads X-Forwarded-For (createApiKeyGuard without
  // trustProxy) is not handed the header, which saves a header lookup per request; asked
  // again whenever `guard.check` is replaced.
  let knownCheck = guard.check;
  let readsForwardedFor = guardReadsForwardedFor(guard);
  // Not an `async` function: on the synchronous path (warm cache, memory store) the request
  // waits on nothing but the rest of the chain. Its promise settles as the async version's
  // did: after the chain, with nothing, or rejected with what the guard or the chain threw.
  return function apiKey(c, next) {
    try {
      if (guard.check !== knownCheck) {
        knownCheck = guard.check;
        readsForwardedFor = guardReadsForwardedFor(guard);
      }
      const authorization = c.req.header('authorization');
      const request = {
        // Every `Authorization` line, joined with `, ` as `Headers` joins them: the guard
        // refuses more than one set of credentials (core's `singleAuthorization`).
        authorization,
        // Only for a precise 401 (`unsupported_auth_scheme`, not "missing"): the guard looks
        // at it only when there is no Authorization, so the header is read only then.
        xApiKey: authorization ? undefined : c.req.header('x-api-key'),
        url: c.req.url,
        remoteAddress: clientAddress(c),
        forwardedFor: readsForwardedFor ? c.req.header('x-forwarded-for') : undefined,
      };
      // The guard's synchronous twin when it has one: no promise to wait for, and a native
      // one otherwise (maybe-promise.ts), so `instanceof` tells. Any other guard is awaited.
      const fast = maybeSyncVariant(guard.check);
      const result = fast !== undefined ? fast(request, checkOptions) : guard.check(request, checkOptions);
      if (result instanceof Promise || fast === undefined) return Promise.resolve(result).then((checked) => admit(c, next, checked));
      return admit(c, next, result);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** The guard's headers for this request, for `sendPage()` (a context variable: `c.set`/`c.get`). */
export const GUARD_HEADERS = 'keyset:guardHeaders';

/**
 * Exposes the caller, runs the rest of the chain, then gives the response the guard's
 * headers it lacks. The in-flight lease (`release`) is given back when the response body
 * has been sent or cancelled (a streamed one included), or when the chain fails.
 */
function admit(c: Context, next: Next, { key, headers, release }: ApiKeyGuardResult): Promise<void> {
  c.set('apiKey', key);
  c.set(GUARD_HEADERS, headers);
  let chain: Promise<void>;
  try {
    // Promise.resolve: the same promise for Hono's own next(); one that returns nothing or a
    // bare thenable is waited for as `await next()` did.
    chain = Promise.resolve(next());
  } catch (error) {
    release?.();
    throw error;
  }
  return chain.then(() => {
    try {
      addHeaders(c, headers);
    } finally {
      const res = releaseWithBody(c.res, release);
      if (res !== c.res) c.res = res;
    }
  }, (error: unknown) => {
    release?.();
    throw error;
  });
}

/** The guard's headers the response lacks: sendPage() built its page with them; any other response (a handler's own, an error's problem) gets them now, unless it already names them (an inner apiKey() layer's). */
function addHeaders(c: Context, headers: Record<string, string>): void {
  let present = c.res.headers;
  for (const name in headers) {
    if (present.has(name)) continue;
    try {
      present.set(name, headers[name] as string);
    } catch {
      // Immutable headers (a Response from fetch()): `c.header()` copies the response.
      c.header(name, headers[name] as string);
      present = c.res.headers;
    }
  }
}
