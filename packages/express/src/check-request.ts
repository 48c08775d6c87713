/**
 * `checkRequest()` refuses, before routing, what servers could read differently (a target
 * that is no path, `\`, `%61`, dot segments), a Host that names no host, or a Content-Type
 * that is no media type: core's `requestError()`, one rule on every adapter.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { Request, RequestHandler } from 'express';

/** The problem `instance`: the path of the request line's target, without the query. */
export const instanceOf = (req: Request): string => requestInstance(req.originalUrl);

/** core's refusal of this request before routing, or `undefined`. */
export const refusalOf = (req: Request): Error | undefined =>
  requestError({ target: req.originalUrl, host: req.headers.host, contentType: req.headers['content-type'] });

/**
 * Middleware, registered before the routes, that passes core's 400 `invalid_request` to
 * `next()` for a request no route should see; `problemHandler()` answers it.
 *
 * @example
 * ```ts
 * app.use(checkRequest()); // then routes, notFoundHandler(), problemHandler()
 * ```
 */
export function checkRequest(): RequestHandler {
  return function checkRequest(req, _res, next) {
    next(refusalOf(req));
  };
}
