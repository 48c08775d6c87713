/**
 * `checkRequest()` refuses before routing what core's `requestError()` refuses (a target
 * servers could read differently, a bad Host or Content-Type): one rule on every adapter.
 * @module
 */
import { isKeysetError, toProblem } from '@keyset/core';
import { requestError, requestInstance, webBodyPending } from '@keyset/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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
export function refusalOf(c: Context): Error | undefined {
  const host = incomingOf(c)?.headers?.host;
  return requestError({
    target: targetOf(c),
    host: typeof host === 'string' ? host : (c.req.header('host') ?? new URL(c.req.url).host),
    contentType: c.req.header('content-type'),
  });
}

/**
 * What keyset throws for a request it refuses: a keyset error becomes Hono's
 * `HTTPException` carrying the problem response (its `cause` the keyset error), so Hono's
 * default error handler answers it as is, and an app's own `onError` sees it and may
 * replace it (`problemHandler()` renders the cause with its own `typeBase`). Anything else
 * (a bug) is returned unchanged.
 */
export function refusal(error: unknown, c: Context): unknown {
  if (!isKeysetError(error)) return error;
  const { status, headers, body } = toProblem(error, { instance: instanceOf(c) });
  const res = new Response(JSON.stringify(body), { status, headers: problemHeaders(c, headers) });
  return new HTTPException(status as ContentfulStatusCode, { res, message: error.message, cause: error });
}

/**
 * Middleware, registered first, that refuses with core's 400 `invalid_request` (see `refusal()`).
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
    if (refused !== undefined) throw refusal(refused, c);
    await next();
  };
}
