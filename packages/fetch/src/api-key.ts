/** `apiKey()` wraps a handler that runs only for a valid API key holding `scopes`. @module */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, finishWebResponse, type KnownOptions, webGuardRequest } from '@keyset/core/adapter';
import type { ApiKeyGuard, VerifiedKey, PermissionQuery } from '@keyset/core';
import type { AsyncFetchHandler } from './check-request.ts';

/** Options of `apiKey()`. */
export interface ApiKeyOptions<Rest extends unknown[] = []> {
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
  /** The socket's peer (IP allowlists, refused-credential budgets), never a header: Bun `(request) => server.requestIP(request)?.address`. @default unknown */
  clientAddress?: (request: Request, ...rest: Rest) => string | null | undefined;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, permissions: true, cost: true, route: true, clientAddress: true } as const satisfies KnownOptions<ApiKeyOptions>;

/** A handler behind `apiKey()`: the verified key comes second, the platform's arguments after it. */
export type ApiKeyHandler<Rest extends unknown[] = []> = (request: Request, key: VerifiedKey, ...rest: Rest) => Response | Promise<Response>;

/** What `apiKey()` returns: a wrapper around the handler it protects, keeping its platform arguments. */
export type ApiKeyMiddleware = <Rest extends unknown[] = []>(handler: ApiKeyHandler<Rest>) => AsyncFetchHandler<Rest>;

/**
 * Middleware that runs the handler it wraps only for a valid API key with `scopes`. The
 * guard's refusal (core's 400/401/403/429/503 `KeysetError`), and whatever the handler
 * throws, go up to the outer `problemHandler()`, which answers them with the guard's
 * `RateLimit` headers; an admitted request's response gets those headers too, and its
 * in-flight lease ends with it.
 *
 * @example
 * ```ts
 * export const GET = problemHandler()(apiKey({ guard, scopes: ['orders:read'] })((request, key) => Response.json({ caller: key.name })));
 * ```
 */
export function apiKey<Rest extends unknown[] = []>(options: ApiKeyOptions<Rest>): ApiKeyMiddleware {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, clientAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (clientAddress !== undefined && typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (request, ...platformArgs) => address');
  const checkOptions = apiKeyCheckOptions(options);
  return function apiKeyMiddleware(handler) {
    if (typeof handler !== 'function') throw new ConfigError('apiKey(options) wraps the handler to protect: apiKey(options)(handler)');
    return async function apiKey(request, ...rest) {
      // `clientAddress` reads the platform's arguments the handler is given (its own type says which).
      const admitted = await guard.check(webGuardRequest(request, clientAddress?.(request, ...(rest as unknown[] as Rest))), checkOptions);
      (request as Slots)[HEADERS] = admitted.headers;
      let response: Response;
      try {
        response = await handler(request, admitted.key, ...rest);
      } catch (error) {
        // No response of this request will carry the lease: `problemHandler()` answers the error.
        admitted.release?.();
        throw error;
      }
      return finishWebResponse(request.method, response, admitted);
    };
  };
}

// The request's `RateLimit` headers, under a symbol on the `Request`, for `sendPage()` and
// `problemHandler()` (a WeakMap entry per request would cost every scavenge).
const HEADERS = Symbol('keyset.rateLimitHeaders');
type Slots = { [HEADERS]?: Readonly<Record<string, string>> };
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The headers `apiKey()` recorded for `request`, if any. */
export const rememberedHeaders = (request: Request | undefined): Readonly<Record<string, string>> => (request === undefined ? undefined : (request as Slots)[HEADERS]) ?? NONE;
