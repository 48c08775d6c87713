/**
 * The Node server of the Hono and Fetch servers: `@hono/node-server`'s request listener,
 * with an `errorHandler` (`createAdaptorServer` takes none). Before any of our
 * code runs it builds a `Request` from the target and the Host header, and refuses what
 * forms no URL (a Host that is no host, HTTP/1.0 without one, a backslash in the path,
 * an asterisk-form target) with a `RequestError`, answered by default as a 400 with no
 * body. Here that is the same RFC 9457 problem Express and Fastify answer
 * (`@keyset/express`/`@keyset/fastify` build the URL themselves): 400 `invalid_request`
 * naming `host` or `path`. Any other error (a handler rejected past its own error
 * handling: a bug) is a 500 problem in core's words, never its message.
 * @module
 */
import { createServer, type Server } from 'node:http';
import { getRequestListener, RequestError } from '@hono/node-server';
import { KeysetError, toProblem } from '@keyset/core';

/** A Node HTTP server (not yet listening) answering with `fetch`, every refusal a problem. */
export function createNodeFetchServer(fetch: Parameters<typeof getRequestListener>[0]): Server {
  return createServer(getRequestListener(fetch, { errorHandler: nodeServerErrorResponse }));
}

/** Messages of `RequestError`s about the request target, not the Host header. */
const TARGET_ERRORS: ReadonlySet<string> = new Set(['Backslash in request path', 'Invalid absolute URL']);

/** The problem response for an error `@hono/node-server` hands its `errorHandler`. */
export function nodeServerErrorResponse(error: unknown): Response {
  const problem = toProblem(error instanceof RequestError ? requestProblem(error) : error);
  return new Response(JSON.stringify(problem.body), { status: problem.status, headers: problem.headers });
}

function requestProblem(error: RequestError): KeysetError {
  // `Invalid URL` without a cause: the target does not start with `/` (`*`, `x`); with a
  // cause (the URL parser's TypeError) or `Invalid host header`: the Host is to blame.
  const target = TARGET_ERRORS.has(error.message) || (error.message === 'Invalid URL' && error.cause === undefined);
  return target
    ? new KeysetError('invalid_request', { detail: 'The request target is not a valid path.', extensions: { field: 'path' } })
    : new KeysetError('invalid_request', { detail: 'The Host header does not form a valid URL.', extensions: { field: 'host' } });
}
