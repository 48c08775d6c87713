/**
 * `checkRequest()` refuses before routing what core's `requestError()` refuses (a target
 * servers could read differently, a bad Host or Content-Type): one rule on every adapter.
 * @module
 */
import type { KeysetError } from '@keyset/core';
import { requestError, requestInstance, webBodyPending } from '@keyset/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';

/** `@hono/node-server`'s documented `HttpBindings` (`c.env.incoming`, or under `server`), read structurally. */
interface NodeBindings {
  incoming?: { url?: unknown; complete?: unknown; readableEnded?: unknown; headers?: { host?: unknown }; socket?: { remoteAddress?: unknown } };
  server?: NodeBindings;
}

function incomingOf(c: Context): NodeBindings['incoming'] {
  const env = c.env as NodeBindings | undefined;
  return typeof env === 'object' && env !== null ? (env.server ?? env).incoming : undefined;
}

/** The socket's peer on `@hono/node-server`, else `undefined`. */
export const nodeSocketAddress = (c: Context): string | undefined => {
  const address = incomingOf(c)?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
};

/** The target as sent: on Node the request line's (`c.req.url` has `/../` resolved, `\` as `/`), else path and query. */
function targetOf(c: Context): string {
  const target = incomingOf(c)?.url;
  if (typeof target === 'string') return target;
  const { pathname, search } = new URL(c.req.url);
  return `${pathname}${search}`;
}

/** The problem `instance`: the path as the client sent it, without the query. */
export const instanceOf = (c: Context): string => requestInstance(targetOf(c));

/** A problem's headers, with `Connection: close` when the request's body is still on its way or was left part-read (see `webBodyPending()`). */
export function problemHeaders(c: Context, headers: Record<string, string>): Record<string, string> {
  return webBodyPending(c.req.raw, incomingOf(c)) ? { ...headers, connection: 'close' } : headers;
}

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(c: Context): KeysetError | undefined {
  const host = incomingOf(c)?.headers?.host;
  return requestError({
    target: targetOf(c),
    host: typeof host === 'string' ? host : (c.req.header('host') ?? new URL(c.req.url).host),
    contentType: c.req.header('content-type'),
  });
}

/**
 * Middleware, registered first, that throws core's 400 `invalid_request` for a request no
 * route should see; `app.onError(problemHandler())` answers it, as every keyset refusal.
 *
 * @example
 * ```ts
 * app.use(checkRequest());
 * app.onError(problemHandler());
 * ```
 */
export function checkRequest(): MiddlewareHandler {
  return async function checkRequest(c, next) {
    const refused = refusalOf(c);
    if (refused !== undefined) throw refused;
    await next();
  };
}
