/**
 * `apiKey()` authenticates the request with core's guard and exposes the key as `c.var.apiKey`.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, guardReadsForwardedFor, type KnownOptions, releaseWithBody } from '@keyset/core/adapter';
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
  /** Scopes the key must hold, else 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** The socket's peer (IP allowlists), never a header: off Node, `(c) => getConnInfo(c).remote.address`. @default the Node socket's, else unknown */
  clientAddress?: (c: Context) => string | null | undefined;
  /** Credits this route spends from the key's quota, an integer 0 to 1,000,000 (rate limits count requests). @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, clientAddress: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

/**
 * Middleware that refuses a request without a valid API key holding `scopes` (core's
 * 400/401/403/429/503); `RateLimit` headers go on every response of an admitted request.
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
  const checkOptions = apiKeyCheckOptions(options); // reads scopes, cost and route
  // A guard that never reads X-Forwarded-For is not handed it (asked again if `check` is replaced).
  let knownCheck = guard.check;
  let readsForwardedFor = guardReadsForwardedFor(guard);
  return function apiKey(c, next) {
    try {
      if (guard.check !== knownCheck) {
        knownCheck = guard.check;
        readsForwardedFor = guardReadsForwardedFor(guard);
      }
      const authorization = c.req.header('authorization');
      const request = {
        authorization, // every line, joined with `, `: the guard refuses two sets of credentials
        // Only for a precise 401 (`unsupported_auth_scheme`) when there is no Authorization.
        xApiKey: authorization ? undefined : c.req.header('x-api-key'),
        url: c.req.url,
        remoteAddress: clientAddress(c),
        forwardedFor: readsForwardedFor ? c.req.header('x-forwarded-for') : undefined,
      };
      return guard.check(request, checkOptions).then((checked) => admit(c, next, checked));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** The guard's headers for this request, for `sendPage()` (a context variable). */
export const GUARD_HEADERS = 'keyset:guardHeaders';

/** Exposes the caller, runs the chain, adds the guard's headers; the in-flight lease ends with the body (sent or cancelled) or a failure. */
function admit(c: Context, next: Next, { key, headers, release }: ApiKeyGuardResult): Promise<void> {
  c.set('apiKey', key);
  c.set(GUARD_HEADERS, headers);
  let chain: Promise<void>;
  try {
    // Promise.resolve: a next() that returns nothing or a bare thenable is waited for too.
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
      // Hono's documented way to replace the response after next() (hono.dev, Guides >
      // Middleware, "Modify the Response After Next"); only when a lease wraps the body.
      if (res !== c.res) c.res = res;
    }
  }, (error: unknown) => {
    release?.();
    throw error;
  });
}

/** The guard's headers the response lacks (an inner apiKey() layer's stay). */
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
