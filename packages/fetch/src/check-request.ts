/**
 * `checkRequest()` refuses, before the handler runs, a request that servers could read
 * differently (a target that is no path, `\`, `%61`, dot segments, a bad escape), a Host
 * that names no host, or a Content-Type that is no media type: core's `requestError()`,
 * the same rule on every adapter (docs/adapters.md, "Requests"). Also what the other
 * modules read of the request as sent.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { RequestFacts } from '@keyset/core/adapter';
import type { AsyncFetchHandler, FetchHandler } from './api-key.ts';

/**
 * The Node request `@hono/node-server` passes after the `Request` (`{ incoming }`, its
 * documented `HttpBindings`), read structurally: nothing runtime-specific is imported.
 */
function incomingOf(platform: unknown): { url?: unknown; headers?: { host?: unknown } } | undefined {
  return (platform as { incoming?: { url?: unknown; headers?: { host?: unknown } } } | null | undefined)?.incoming;
}

/**
 * The request target as sent: on `@hono/node-server` the request line's (`request.url` has
 * `/../` resolved and `\` turned into `/`), elsewhere the URL's path and query.
 */
function targetOf(request: Request, platform: unknown): string {
  const target = incomingOf(platform)?.url;
  if (typeof target === 'string') return target;
  const { pathname, search } = new URL(request.url);
  return `${pathname}${search}`;
}

/** The problem `instance`: the path as the client sent it, without the query. */
export function instanceOf(request: Request, platform?: unknown): string {
  return requestInstance(targetOf(request, platform));
}

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(request: Request, platform?: unknown): Error | undefined {
  const host = incomingOf(platform)?.headers?.host;
  const facts: RequestFacts = {
    target: targetOf(request, platform),
    host: typeof host === 'string' ? host : (request.headers.get('host') ?? new URL(request.url).host),
    contentType: request.headers.get('content-type'),
  };
  return requestError(facts);
}

/**
 * Wraps `handler` so that a request no route should see is refused before it runs: the
 * core's 400 `invalid_request` is thrown (a rejected promise) for `problemHandler()` to
 * answer. Put it inside `problemHandler()`, around the router.
 *
 * @example
 * ```ts
 * export default { fetch: problemHandler(checkRequest(router)) };
 * ```
 */
export function checkRequest<Rest extends unknown[] = []>(handler: FetchHandler<Rest>): AsyncFetchHandler<Rest> {
  if (typeof handler !== 'function') throw new TypeError('checkRequest(handler) needs the handler to wrap');
  return async function checkRequest(request, ...rest) {
    const refused = refusalOf(request, rest[0]);
    if (refused !== undefined) throw refused;
    return handler(request, ...rest);
  };
}
