/**
 * `checkRequest()` refuses, before routing, what servers could read differently (a target
 * that is no path, `\`, `%61`, dot segments), a Host that names no host, or a Content-Type
 * that is no media type: core's `requestError()`, one rule on every adapter.
 * @module
 */
import type { KeysetError } from '@keyset/core';
import { nodeBodyPending, requestError, requestInstance } from '@keyset/core/adapter';
import type { Request, RequestHandler, Response } from 'express';

/** The problem `instance`: the path of the request line's target, without the query. */
export const instanceOf = (req: Request): string => requestInstance(req.originalUrl);

/** core's refusal of this request before routing, or `undefined`. */
export const refusalOf = (req: Request): KeysetError | undefined =>
  requestError({ target: req.originalUrl, host: req.headers.host, contentType: req.headers['content-type'] });

/** Sends a problem; with `Connection: close` when the request's body is still on its way unread (see `nodeBodyPending()`). */
export function sendProblem(req: Request, res: Response, status: number, headers: Record<string, string>, body: unknown): void {
  res.status(status).set(headers);
  if (nodeBodyPending(req)) res.set('connection', 'close');
  // Bytes, not a string, for which Express would add `; charset=utf-8`: the media type
  // defines no charset parameter (RFC 8259 §11), and every adapter sends the same header.
  res.send(Buffer.from(JSON.stringify(body)));
}

/**
 * Middleware, registered before the routes, that passes core's 400 `invalid_request` for a
 * request no route should see to `next(error)`: `problemHandler()` answers it, as it
 * answers every keyset refusal.
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
