/**
 * The Node server of the Hono and Fetch servers: `@hono/node-server`'s request listener.
 * Before any of our code runs it builds a `Request` from the target and the Host header,
 * and refuses what forms no URL (a Host that is no host, a backslash in the path, an
 * asterisk-form target) with a bare 400. So the request line and the Host are first put
 * to core's rule (`requestError`, what `checkRequest()` applies on every adapter), and a
 * refusal is the same RFC 9457 problem, with its `instance`, that Express and Fastify
 * answer. Any other error (a handler rejected past its own error handling: a bug) is a
 * 500 problem in core's words, never its message.
 * @module
 */
import { createServer, type Server } from 'node:http';
import { getRequestListener, RequestError } from '@hono/node-server';
import { KeysetError, toProblem } from '@keyset/core';
import { requestError, requestInstance } from '@keyset/core/adapter';

/** A Node HTTP server (not yet listening) answering with `fetch`, every refusal a problem. */
export function createNodeFetchServer(fetch: Parameters<typeof getRequestListener>[0]): Server {
  const listener = getRequestListener(fetch, { errorHandler: nodeServerErrorResponse });
  return createServer((incoming, outgoing) => {
    const target = incoming.url ?? '';
    const refused = requestError({ target, host: incoming.headers.host, contentType: incoming.headers['content-type'] });
    if (refused === undefined) return void listener(incoming, outgoing);
    const { status, headers, body } = toProblem(refused, { instance: requestInstance(target) });
    outgoing.writeHead(status, headers).end(JSON.stringify(body));
  });
}

/** The problem response for an error `@hono/node-server` hands its `errorHandler` (what core's rule let through). */
export function nodeServerErrorResponse(error: unknown): Response {
  const problem = toProblem(
    error instanceof RequestError ? new KeysetError('invalid_request', { detail: 'The request target or Host does not form a URL.', cause: error }) : error,
  );
  return new Response(JSON.stringify(problem.body), { status: problem.status, headers: problem.headers });
}
