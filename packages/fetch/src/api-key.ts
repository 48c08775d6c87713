/** `apiKey()` wraps a handler that runs only for a valid API key holding `scopes`. @module */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, guardReadsForwardedFor, type KnownOptions, releaseWithBody } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult, VerifiedKey } from '@keyset/core';

/** A `Request → Response` handler; `Rest` is what the platform passes after the request (a Next.js route's `{ params }`, a Worker's `env` and `ctx`). */
export type FetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Response | Promise<Response>;

/** What `apiKey()`, `checkRequest()` and `problemHandler()` return: a handler that always answers asynchronously. */
export type AsyncFetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Promise<Response>;

/** Options of `apiKey()`. */
export interface ApiKeyOptions<Rest extends unknown[] = []> {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /** Scopes the key must hold, else 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** The socket's peer (IP allowlists), never a header: Bun `(request) => server.requestIP(request)?.address`. @default unknown */
  clientAddress?: (request: Request, ...rest: Rest) => string | null | undefined;
  /** Credits this route spends from the key's quota, an integer 0 to 1,000,000 (rate limits count requests). @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, clientAddress: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

/** A handler behind `apiKey()`: the verified key comes second, the platform's arguments after it. */
export type ApiKeyHandler<Rest extends unknown[] = []> = (request: Request, key: VerifiedKey, ...rest: Rest) => Response | Promise<Response>;

/**
 * Wraps `handler` so that it runs only for a valid API key with `scopes`; refusals are
 * core's errors for `problemHandler()`; `RateLimit` headers go on every response.
 *
 * @example
 * ```ts
 * export const GET = problemHandler(apiKey({ guard, scopes: ['orders:read'] }, (request, key) => Response.json({ caller: key.name })));
 * ```
 */
export function apiKey<Rest extends unknown[] = []>(options: ApiKeyOptions<Rest>, handler: ApiKeyHandler<Rest>): AsyncFetchHandler<Rest> {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, clientAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof handler !== 'function') throw new ConfigError('apiKey(options, handler) needs the handler to protect');
  if (clientAddress !== undefined && typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (request, ...platformArgs) => address');
  const checkOptions = apiKeyCheckOptions(options); // reads scopes, cost and route
  // A guard that never reads X-Forwarded-For is not handed it (asked again if `check` is replaced).
  let knownCheck = guard.check;
  let readsForwardedFor = guardReadsForwardedFor(guard);
  // Not `async` (a `then` costs less than a suspended frame); it rejects, never throws.
  return function apiKey(request, ...rest) {
    try {
      if (guard.check !== knownCheck) {
        knownCheck = guard.check;
        readsForwardedFor = guardReadsForwardedFor(guard);
      }
      const authorization = request.headers.get('authorization');
      const checked = {
        authorization,
        // Only for a precise 401 (`unsupported_auth_scheme`) when there is no Authorization.
        xApiKey: authorization ? undefined : request.headers.get('x-api-key'),
        url: request.url,
        remoteAddress: clientAddress?.(request, ...rest),
        forwardedFor: readsForwardedFor ? request.headers.get('x-forwarded-for') : undefined,
      };
      return guard.check(checked, checkOptions).then((ok) => serve(request, rest, ok));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** Runs the handler; its response gets the guard's headers it lacks; the in-flight lease ends with the body or a failure. */
  function serve(request: Request, rest: Rest, { key, headers, release }: ApiKeyGuardResult): Promise<Response> {
    (request as Slots)[HEADERS] = headers;
    let answer: Promise<Response>;
    try {
      answer = Promise.resolve(handler(request, key, ...rest));
    } catch (error) {
      release?.();
      throw error;
    }
    return answer.then(
      (response) =>
        // sendPage() built its response with this layer's headers (the innermost of nested ones).
        releaseWithBody((request as Slots)[CARRIER] === response && rememberedHeaders(request) === headers ? response : withHeaders(response, headers), release),
      (error: unknown) => {
        release?.();
        throw error;
      },
    );
  }
}

// The request's `RateLimit` headers and the response `sendPage()` built with them, under
// symbols on the `Request` (a WeakMap entry per request would cost every scavenge).
const HEADERS = Symbol('keyset.rateLimitHeaders');
const CARRIER = Symbol('keyset.rateLimitHeadersCarrier');
type Slots = { [HEADERS]?: Readonly<Record<string, string>>; [CARRIER]?: Response };
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The headers `apiKey()` recorded for `request`, if any. */
export const rememberedHeaders = (request: Request | undefined): Readonly<Record<string, string>> => (request === undefined ? undefined : (request as Slots)[HEADERS]) ?? NONE;

/** Records that `sendPage()` built `response` with the headers recorded for `request`. */
export const carriedBy = (request: Request, response: Response): void => void ((request as Slots)[CARRIER] = response);

/** `response` with `headers` it lacks; one from `fetch()` (immutable headers) is copied. */
function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const missing = Object.entries(headers).filter(([name]) => !response.headers.has(name));
  if (missing.length === 0) return response;
  let target = response;
  try {
    target.headers.set(...(missing[0] as [string, string])); // throws on immutable headers
  } catch {
    target = new Response(response.body, response);
  }
  for (const [name, value] of missing) target.headers.set(name, value);
  return target;
}
