/**
 * `apiKey()` wraps a handler: it runs only for a request with a valid API key holding
 * `scopes`, receives the verified key, and its response gets the `RateLimit` headers.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, guardReadsForwardedFor, type KnownOptions, maybeSyncVariant, releaseWithBody } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult, VerifiedKey } from '@keyset/core';

/** A `Request → Response` handler; `Rest` is what the platform passes after the request (a Next.js route's `{ params }`, a Worker's `env` and `ctx`). */
export type FetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Response | Promise<Response>;

/** What `apiKey()`, `checkRequest()` and `problemHandler()` return: a handler that always answers asynchronously. */
export type AsyncFetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Promise<Response>;

/** Options of `apiKey()`. */
export interface ApiKeyOptions<Rest extends unknown[] = []> {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /**
   * Scopes the key must hold; a key without one of them gets 403 `insufficient_scope`.
   * @default [] (any valid key)
   */
  scopes?: readonly string[];
  /**
   * The client's socket address, which a `Request` does not carry; keys with an IP
   * allowlist need it (without it they are refused: 403 `ip_not_allowed`). Take it from the
   * platform, never from a header: Bun `(request) => server.requestIP(request)?.address`,
   * Deno `(request, info) => info.remoteAddr.hostname`, `@hono/node-server`
   * `(request, env) => env.incoming.socket.remoteAddress`. `X-Forwarded-For` is read by the
   * guard, and only under its `trustProxy` setting (Cloudflare Workers: trust
   * `CF-Connecting-IP` by returning it here only if the Worker cannot be reached otherwise).
   * @default unknown
   */
  clientAddress?: (request: Request, ...rest: Rest) => string | null | undefined;
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

/** Every name `ApiKeyOptions` knows, checked when the handler is made. */
const API_KEY_OPTIONS = { guard: true, scopes: true, clientAddress: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

/** A handler behind `apiKey()`: the verified key comes second, the platform's arguments after it. */
export type ApiKeyHandler<Rest extends unknown[] = []> = (
  request: Request,
  key: VerifiedKey,
  ...rest: Rest
) => Response | Promise<Response>;

/**
 * Wraps `handler` so that it runs only when the request carries a valid API key with
 * `scopes` (`Authorization: ApiKey …`). Refusals are thrown as the core's errors (400,
 * 401, 403, 429, 503): wrap the result in `problemHandler()`, which answers them as
 * problems. The `RateLimit` headers go on every response of an authenticated request,
 * errors included. The body is never read here: the key is checked before the handler
 * parses anything.
 *
 * @example
 * ```ts
 * // app/api/me/route.ts
 * export const GET = problemHandler(
 *   apiKey({ guard, scopes: ['orders:read'] }, (request, key) => Response.json({ caller: key.name })),
 * );
 * ```
 */
export function apiKey<Rest extends unknown[] = []>(options: ApiKeyOptions<Rest>, handler: ApiKeyHandler<Rest>): AsyncFetchHandler<Rest> {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard, scopes, cost, route, clientAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof handler !== 'function') throw new ConfigError('apiKey(options, handler) needs the handler to protect');
  if (clientAddress !== undefined && typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (request, ...platformArgs) => address');
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
  // Not an `async` function: on the synchronous path (warm cache, memory store) nothing is
  // waited for but the handler, and a `then` costs less than an async function's suspended
  // frame. Its promise settles as the async version's did: rejected (never thrown) with what
  // the guard or the handler threw, else with the handler's response carrying the headers.
  return function apiKey(request, ...rest) {
    try {
      if (guard.check !== knownCheck) {
        knownCheck = guard.check;
        readsForwardedFor = guardReadsForwardedFor(guard);
      }
      const authorization = request.headers.get('authorization');
      const checked = {
        authorization,
        // Only for a precise 401 (`unsupported_auth_scheme`, not "missing"): the guard looks
        // at it only when there is no Authorization, so the header is read only then.
        xApiKey: authorization ? undefined : request.headers.get('x-api-key'),
        url: request.url,
        remoteAddress: clientAddress?.(request, ...rest),
        forwardedFor: readsForwardedFor ? request.headers.get('x-forwarded-for') : undefined,
      };
      // The guard's synchronous twin when it has one: no promise to wait for, and a native
      // one otherwise (maybe-promise.ts), so `instanceof` tells. Any other guard is awaited.
      const fast = maybeSyncVariant(guard.check);
      const result = fast !== undefined ? fast(checked, checkOptions) : guard.check(checked, checkOptions);
      return result instanceof Promise || fast === undefined ? serveWhenChecked(request, rest, result) : serve(request, rest, result);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** serve() once the guard has answered (a helper of its own: the synchronous path allocates no closure). */
  function serveWhenChecked(request: Request, rest: Rest, result: ApiKeyGuardResult | PromiseLike<ApiKeyGuardResult>): Promise<Response> {
    return Promise.resolve(result).then((checked) => serve(request, rest, checked));
  }

  /**
   * Runs the handler for the verified caller; its response gets the guard's headers where it
   * lacks them. The in-flight lease is given back when the body has been sent or cancelled
   * (a streamed one included), or at once when the handler fails.
   */
  function serve(request: Request, rest: Rest, { key, headers, release }: ApiKeyGuardResult): Promise<Response> {
    rememberHeaders(request, headers);
    let answer: Promise<Response>;
    try {
      answer = Promise.resolve(handler(request, key, ...rest));
    } catch (error) {
      release?.();
      throw error;
    }
    return answer.then(
      (response) =>
        // sendPage() built its response with them; any other gets them now, where it lacks them.
        // Only this layer's own: behind another apiKey() (nested guards), sendPage() used the
        // innermost layer's headers, and each outer layer still adds its own where missing.
        releaseWithBody(carries(request, response) && rememberedHeaders(request) === headers ? response : withHeaders(response, headers), release),
      (error: unknown) => {
        release?.();
        throw error;
      },
    );
  }
}

// What `apiKey()` learns about a request and later steps need: the `RateLimit` headers an
// authenticated request carries on every response, errors included, and which response
// `sendPage()` already built with them. Kept in symbol-keyed properties of the `Request`
// (per request, nothing at module level): a WeakMap entry per request is an ephemeron the
// garbage collector must trace on every scavenge.
const HEADERS = Symbol('keyset.rateLimitHeaders');
const CARRIER = Symbol('keyset.rateLimitHeadersCarrier');
interface Slots {
  [HEADERS]?: Readonly<Record<string, string>>;
  [CARRIER]?: Response;
}
const NONE: Readonly<Record<string, string>> = Object.freeze({});

function rememberHeaders(request: Request, headers: Readonly<Record<string, string>>): void {
  (request as Slots)[HEADERS] = headers;
}

/** The headers `apiKey()` recorded for `request`, if any. */
export function rememberedHeaders(request: Request | undefined): Readonly<Record<string, string>> {
  return (request === undefined ? undefined : (request as Slots)[HEADERS]) ?? NONE;
}

/** Records that `response` carries the headers recorded for `request` (`sendPage()` built it with them). */
export function carriedBy(request: Request, response: Response): void {
  (request as Slots)[CARRIER] = response;
}

function carries(request: Request, response: Response): boolean {
  return (request as Slots)[CARRIER] === response;
}

/**
 * `response` with `headers` added where it has none of that name. A `Response` from
 * `fetch()` has immutable headers: it is copied (same body stream, status and headers).
 */
function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const missing = Object.entries(headers).filter(([name]) => !response.headers.has(name));
  if (missing.length === 0) return response;
  let target = response;
  try {
    for (const [name, value] of missing) target.headers.set(name, value);
  } catch {
    target = new Response(response.body, response);
    for (const [name, value] of missing) target.headers.set(name, value);
  }
  return target;
}
