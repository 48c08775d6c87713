/**
 * `checkRequest()` refuses, before the route runs, a request that servers could read
 * differently (a target that is no path, `\`, `%61`, dot segments, a bad escape), a Host
 * that names no host, or a Content-Type that is no media type: core's `requestError()`,
 * the same rule on every adapter (docs/adapters.md, "Requests"). The `keyset` plugin
 * installs it app-wide. Also what the other modules read of the request as sent.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { KeysetError } from '@keyset/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** The request target as sent (`request.raw.url`, the request line's). */
export function targetOf(request: FastifyRequest): string {
  return request.raw.url ?? '/';
}

/** The problem `instance`: the path as the client sent it, without the query. */
export function instanceOf(request: FastifyRequest): string {
  return requestInstance(targetOf(request));
}

/** core's refusal of this request before routing, or `undefined`. */
export function refusalOf(request: FastifyRequest): KeysetError | undefined {
  return requestError({ target: targetOf(request), host: request.headers.host, contentType: request.headers['content-type'] });
}

/**
 * An `onRequest` hook that hands Fastify the core's 400 `invalid_request` for a request no
 * route should see (before Fastify reads a body); the error handler answers it. The
 * `keyset` plugin adds it to the app unless `checkRequests: false`.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', checkRequest());
 * ```
 */
export function checkRequest(): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return function checkRequest(request, _reply, done) {
    const refused = refusalOf(request);
    if (refused === undefined) done();
    else done(refused as Parameters<HookHandlerDoneFunction>[0]);
  };
}
