/**
 * `checkRequest()` refuses, before routing, a request that servers could read differently
 * (a target that is no path, `\`, `%61`, dot segments, a bad escape), a Host that names no
 * host, or a Content-Type that is no media type: core's `requestError()`, the same rule on
 * every adapter (docs/adapters.md, "Requests"). Also what the other modules read of the
 * request as sent.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { Request, RequestHandler } from 'express';

/** The problem `instance`: the path of `req.originalUrl` (the request line's target), without the query. */
export function instanceOf(req: Request): string {
  return requestInstance(req.originalUrl);
}

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(req: Request): Error | undefined {
  return requestError({ target: req.originalUrl, host: req.headers.host, contentType: req.headers['content-type'] });
}

/**
 * Middleware, registered before the routes (`app.use(checkRequest())`), that passes the
 * core's 400 `invalid_request` to `next()` for a request no route should see;
 * `problemHandler()` answers it.
 *
 * @example
 * ```ts
 * app.use(checkRequest());
 * // routes, then notFoundHandler() and problemHandler()
 * ```
 */
export function checkRequest(): RequestHandler {
  return function checkRequest(req, _res, next) {
    next(refusalOf(req));
  };
}
