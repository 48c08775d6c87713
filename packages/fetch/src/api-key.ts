/** `apiKey()` wraps a handler that runs only for a valid API key holding `scopes`. @module */
import { ConfigError, isKeysetError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, finishWebResponse, type KnownOptions, webGuardRequest } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult, VerifiedKey, PermissionQuery } from '@keyset/core';
import { refusalResponse, type AsyncFetchHandler } from './check-request.ts';

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

/**
 * Wraps `handler` so that it runs only for a valid API key with `scopes`. A refused request,
 * and a keyset error the handler throws (`paginate()`'s 400s), are answered with their
 * problem response, which an outer `problemHandler()` reports and renders with its options;
 * the guard's `RateLimit` headers go on every response, and its in-flight lease ends with it.
 *
 * @example
 * ```ts
 * export const GET = apiKey({ guard, scopes: ['orders:read'] }, (request, key) => Response.json({ caller: key.name }));
 * ```
 */
export function apiKey<Rest extends unknown[] = []>(options: ApiKeyOptions<Rest>, handler: ApiKeyHandler<Rest>): AsyncFetchHandler<Rest> {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, clientAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof handler !== 'function') throw new ConfigError('apiKey(options, handler) needs the handler to protect');
  if (clientAddress !== undefined && typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (request, ...platformArgs) => address');
  const checkOptions = apiKeyCheckOptions(options);
  return async function apiKey(request, ...rest) {
    let admitted: ApiKeyGuardResult;
    try {
      admitted = await guard.check(webGuardRequest(request, clientAddress?.(request, ...rest)), checkOptions);
    } catch (error) {
      if (isKeysetError(error)) return refusalResponse(error, request, rest[0]);
      throw error;
    }
    (request as Slots)[HEADERS] = admitted.headers;
    let response: Response;
    try {
      response = await handler(request, admitted.key, ...rest);
    } catch (error) {
      if (!isKeysetError(error)) {
        admitted.release?.();
        throw error;
      }
      response = refusalResponse(error, request, rest[0]);
    }
    return finishWebResponse(request.method, response, admitted);
  };
}

// The request's `RateLimit` headers, under a symbol on the `Request`, for `sendPage()` and
// `problemHandler()` (a WeakMap entry per request would cost every scavenge).
const HEADERS = Symbol('keyset.rateLimitHeaders');
type Slots = { [HEADERS]?: Readonly<Record<string, string>> };
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The headers `apiKey()` recorded for `request`, if any. */
export const rememberedHeaders = (request: Request | undefined): Readonly<Record<string, string>> => (request === undefined ? undefined : (request as Slots)[HEADERS]) ?? NONE;
