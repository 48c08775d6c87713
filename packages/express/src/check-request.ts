/**
 * `checkRequest()` refuses, before routing, what servers could read differently (a target
 * that is no path, `\`, `%61`, dot segments), a Host that names no host, or a Content-Type
 * that is no media type: core's `requestError()`, one rule on every adapter. It also says
 * how keyset's middlewares answer a request they refuse (`refusals`).
 * @module
 */
import { isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, nodeBodyPending, requestError, requestInstance } from '@keyset/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** The problem `instance`: the path of the request line's target, without the query. */
export const instanceOf = (req: Request): string => requestInstance(req.originalUrl);

/** core's refusal of this request before routing, or `undefined`. */
export const refusalOf = (req: Request): Error | undefined =>
  requestError({ target: req.originalUrl, host: req.headers.host, contentType: req.headers['content-type'] });

/** Options of `checkRequest()`. */
export interface CheckRequestOptions {
  /**
   * How `apiKey()`, `paginate()`, `checkRequest()` and `notFoundHandler()` answer a request
   * they refuse: `'answer'` sends its problem at once (status, `application/problem+json`,
   * headers), so an app with no error handler still answers it right; `'next'` passes the
   * keyset error to `next(error)`, for your error handlers to see and replace
   * (`problemHandler()` renders and reports it). Express cannot tell whether an error
   * handler follows, and its own renders HTML: hence a choice, made once per app.
   * @default 'answer'
   */
  refusals?: 'answer' | 'next';
}

const CHECK_REQUEST_OPTIONS = { refusals: true } as const satisfies KnownOptions<CheckRequestOptions>;

// This request's `refusals` choice, in `res.locals` under a symbol no user key can collide with.
const REFUSALS = Symbol('keyset.refusals');
type Slot = { [REFUSALS]?: 'next' };

/**
 * Answers a keyset error with its problem (or passes it on under `refusals: 'next'`); any
 * other error goes to `next(error)`. Headers set before (the guard's `RateLimit`) stay.
 */
export function refuse(error: unknown, req: Request, res: Response, next: NextFunction, typeBase?: string): void {
  if (!isKeysetError(error) || (res.locals as Slot)[REFUSALS] === 'next' || res.headersSent) return next(error);
  const instance = instanceOf(req);
  const { status, headers, body } = toProblem(error, typeBase === undefined ? { instance } : { instance, typeBase });
  sendProblem(req, res, status, headers, body);
}

/** Sends a problem; with `Connection: close` when the request's body is still on its way unread (see `nodeBodyPending()`). */
export function sendProblem(req: Request, res: Response, status: number, headers: Record<string, string>, body: unknown): void {
  res.status(status).set(headers);
  if (nodeBodyPending(req)) res.set('connection', 'close');
  res.send(JSON.stringify(body));
}

/**
 * Middleware, registered before the routes, that refuses with core's 400 `invalid_request`
 * a request no route should see; see `refusals` for how it (and every keyset middleware
 * after it) answers.
 *
 * @example
 * ```ts
 * app.use(checkRequest()); // then routes, notFoundHandler(), problemHandler()
 * ```
 */
export function checkRequest(options: CheckRequestOptions = {}): RequestHandler {
  assertKnownOptions('checkRequest', options, CHECK_REQUEST_OPTIONS);
  const { refusals = 'answer' } = options;
  if (refusals !== 'answer' && refusals !== 'next') throw new TypeError(`checkRequest() refusals must be 'answer' or 'next', got ${String(refusals)}`);
  return function checkRequest(req, res, next) {
    if (refusals === 'next') (res.locals as Slot)[REFUSALS] = 'next';
    const refused = refusalOf(req);
    if (refused !== undefined) return refuse(refused, req, res, next);
    next();
  };
}
