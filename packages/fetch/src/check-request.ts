/**
 * `checkRequest()` refuses before the handler runs what core's `requestError()` refuses (a
 * target servers could read differently, a bad Host or Content-Type): one rule everywhere.
 * @module
 */
import type { KeysetError } from '@keyset/core';
import { requestError, requestInstance, webBodyPending } from '@keyset/core/adapter';

/** A `Request → Response` handler; `Rest` is what the platform passes after the request (a Next.js route's `{ params }`, a Worker's `env` and `ctx`). */
export type FetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Response | Promise<Response>;

/** What `apiKey()`, `checkRequest()` and `problemHandler()` wrap a handler into: one that always answers asynchronously. */
export type AsyncFetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Promise<Response>;

/** What `checkRequest()` and `problemHandler()` return: a wrapper around the handler it is given, keeping its platform arguments. */
export type FetchMiddleware = <Rest extends unknown[] = []>(handler: FetchHandler<Rest>) => AsyncFetchHandler<Rest>;

/** The Node request `@hono/node-server` passes after the `Request` (its documented `HttpBindings`), read structurally. */
type NodeIncoming = { url?: unknown; complete?: unknown; readableEnded?: unknown; headers?: { host?: unknown } };
function incomingOf(platform: unknown): NodeIncoming | undefined {
  return (platform as { incoming?: NodeIncoming } | null | undefined)?.incoming;
}

/** A problem's headers, with `Connection: close` when the request's body is still on its way or was left part-read (see `webBodyPending()`). */
export function problemHeaders(request: Request | undefined, platform: unknown, headers: Record<string, string>): Record<string, string> {
  return request !== undefined && webBodyPending(request, incomingOf(platform)) ? { ...headers, connection: 'close' } : headers;
}

/** The target as sent: on Node the request line's (`request.url` has `/../` resolved, `\` as `/`), else path and query. */
function targetOf(request: Request, platform: unknown): string {
  const target = incomingOf(platform)?.url;
  if (typeof target === 'string') return target;
  const { pathname, search } = new URL(request.url);
  return `${pathname}${search}`;
}

/** The problem `instance`: the path as the client sent it, without the query. */
export const instanceOf = (request: Request, platform?: unknown): string => requestInstance(targetOf(request, platform));

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(request: Request, platform?: unknown): KeysetError | undefined {
  const sent = incomingOf(platform)?.headers?.host;
  const host = typeof sent === 'string' ? sent : (request.headers.get('host') ?? new URL(request.url).host);
  return requestError({ target: targetOf(request, platform), host, contentType: request.headers.get('content-type') });
}

/**
 * Wraps a handler so that a request no route should see is refused before it runs: core's
 * 400 `invalid_request` is thrown, for the outer `problemHandler()` to answer.
 *
 * @example
 * ```ts
 * export default { fetch: problemHandler()(checkRequest()(router)) };
 * ```
 */
export function checkRequest(): FetchMiddleware {
  return function checkRequestMiddleware(handler) {
    if (typeof handler !== 'function') throw new TypeError('checkRequest() wraps a handler: checkRequest()(handler)');
    return async function checkRequest(request, ...rest) {
      const refused = refusalOf(request, rest[0]);
      if (refused !== undefined) throw refused;
      return handler(request, ...rest);
    };
  };
}
