/**
 * `checkRequest()` refuses, before any route runs, a request that servers could read
 * differently (a target that is no path, `\`, `%61`, dot segments, a bad escape), a Host
 * that names no host, or a Content-Type that is no media type: core's `requestError()`,
 * the same rule on every adapter (docs/adapters.md, "Requests"). Also what the other
 * modules read of the request as sent.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { RequestFacts } from '@keyset/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';

/**
 * What `@hono/node-server` passes as `c.env` (its documented `HttpBindings`: the Node
 * request as `incoming`, or under `server` behind a wrapper), read structurally so that the
 * adapter imports nothing runtime-specific.
 */
interface NodeBindings {
  incoming?: { url?: unknown; headers?: { host?: unknown }; socket?: { remoteAddress?: unknown } };
  server?: NodeBindings;
}

function incomingOf(c: Context): NodeBindings['incoming'] {
  const env = c.env as NodeBindings | undefined;
  return typeof env === 'object' && env !== null ? (env.server ?? env).incoming : undefined;
}

/** The socket's peer on `@hono/node-server` (`c.env.incoming.socket.remoteAddress`), else `undefined`. */
export function nodeSocketAddress(c: Context): string | undefined {
  const address = incomingOf(c)?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}

/**
 * The request target as sent: on Node the request line's (`c.req.url` has `/../` resolved
 * and `\` turned into `/`), elsewhere the URL's path and query.
 */
function targetOf(c: Context): string {
  const target = incomingOf(c)?.url;
  if (typeof target === 'string') return target;
  const { pathname, search } = new URL(c.req.url);
  return `${pathname}${search}`;
}

/** The parts of the request `requestError()` looks at. */
function factsOf(c: Context): RequestFacts {
  const host = incomingOf(c)?.headers?.host;
  return {
    target: targetOf(c),
    host: typeof host === 'string' ? host : (c.req.header('host') ?? new URL(c.req.url).host),
    contentType: c.req.header('content-type'),
  };
}

/** The problem `instance`: the path as the client sent it, without the query. */
export function instanceOf(c: Context): string {
  return requestInstance(targetOf(c));
}

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(c: Context): Error | undefined {
  return requestError(factsOf(c));
}

/**
 * Middleware, registered first (`app.use(checkRequest())`), that throws the core's 400
 * `invalid_request` for a request no route should see; `problemHandler()` answers it.
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
