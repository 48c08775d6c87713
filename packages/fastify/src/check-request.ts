/**
 * `checkRequest()` refuses before routing what core's `requestError()` refuses (a target
 * servers could read differently, a bad Host or Content-Type); the `keyset` plugin adds it.
 * @module
 */
import { requestError, requestInstance } from '@keyset/core/adapter';
import type { KeysetError } from '@keyset/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** The request target as sent (`request.raw.url`, the request line's). */
export const targetOf = (request: FastifyRequest): string => request.raw.url ?? '/';

/** The problem `instance`: the path as the client sent it, without the query. */
export const instanceOf = (request: FastifyRequest): string => requestInstance(targetOf(request));

/** core's refusal of this request before routing, or `undefined`. */
export const refusalOf = (request: FastifyRequest): KeysetError | undefined =>
  requestError({ target: targetOf(request), host: request.headers.host, contentType: request.headers['content-type'] });

/**
 * An `onRequest` hook that hands Fastify core's 400 `invalid_request`, before a body is read.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', checkRequest());
 * ```
 */
export function checkRequest(): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return function checkRequest(request, _reply, done) {
    done(refusalOf(request) as Parameters<HookHandlerDoneFunction>[0]);
  };
}
