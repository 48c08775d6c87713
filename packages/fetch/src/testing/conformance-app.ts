/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/fetch`: one
 * `Request → Response` function, the same on Node, Bun, Deno and workerd.
 * Test support only.
 * @module
 */
import { aborted, inflightChunks, MAX_ECHO_BYTES, OPTION_PEER, PERMITTED_QUERY, inflightStatus, inflightStream, NON_ERROR, RETHROWN } from '@keyset/conformance/fixture';
import type { ConformanceFixture } from '@keyset/conformance/fixture';
import { KeysetError } from '@keyset/core';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, problemResponse, sendPage } from '../index.ts';

/** 413 for a body over the limit: keyset's problem, with the status of RFC 9110 §15.5.14. */
function tooLarge(request: Request): Response {
  const problem = problemResponse(new KeysetError('invalid_request', { detail: 'The request body is larger than this route accepts.', extensions: { field: 'body' } }), { request });
  return new Response(problem.body, { status: 413, headers: problem.headers });
}
import type { FetchHandler } from '../index.ts';

/** What `GET /query` answers: the raw query's pairs, as `URLSearchParams` keeps them. */
export const PARSED_QUERY: string[][] = [['limit', '2'], ['a[b]', 'c'], ['x', '1'], ['x', '2']];

/** How the runtime's socket peer is read from the request and what the platform passes after it. */
export type ClientAddress = (request: Request, platform: unknown) => string | null | undefined;

/**
 * Builds the conformance app over `fixture`; `clientAddress` reads the socket peer from
 * the platform's argument (none: keys with an IP allowlist are refused).
 */
export function conformanceApp(fixture: ConformanceFixture, clientAddress?: ClientAddress): (request: Request, platform?: unknown) => Promise<Response> {
  const { guard, paginator } = fixture;
  const peer = clientAddress === undefined ? {} : { clientAddress };
  const list: FetchHandler<[unknown]> = async (request) => {
    const page = await paginate(request, paginator, { filters: (query) => fixture.filters(query) });
    const { rows, total } = fixture.list(page, new URL(request.url).searchParams);
    return sendPage(page, rows, { total });
  };
  const routes: Record<string, Record<string, FetchHandler<[unknown]>>> = {
    '/items': { GET: apiKey({ guard, scopes: ['items:read'], ...peer })(list) },
    '/public/items': { GET: list },
    '/whoami': { GET: apiKey({ guard, ...peer })((_request, { id, name, last4 }) => Response.json({ id, name, last4 })) },
    '/whoami/any-scheme': { GET: apiKey({ guard: fixture.anySchemeGuard, ...peer })((_request, { id, name, last4 }) => Response.json({ id, name, last4 })) },
    '/permitted': { GET: apiKey({ guard, permissions: PERMITTED_QUERY, ...peer })((_request, { name }) => Response.json({ name })) },
    '/down': { GET: apiKey({ guard: fixture.downGuard, ...peer })(() => new Response('unreachable')) },
    '/expensive': { GET: apiKey({ guard, ...peer, cost: 2, route: 'GET /expensive' })(() => Response.json({ ok: true })) },
    '/echo': {
      POST: apiKey({ guard, ...peer })(async (request) => {
        // A body over 16 KiB is 413, by its Content-Length, before it is read.
        if (Number(request.headers.get('content-length') ?? '0') > MAX_ECHO_BYTES) return tooLarge(request);
        return Response.json({ received: (await request.json()) as unknown });
      }),
    },
    '/query': {
      GET: async (request) => {
        await paginate(request, paginator);
        return Response.json([...new URL(request.url).searchParams]);
      },
    },
    '/inflight/throws': {
      GET: apiKey({ guard, ...peer })(() => {
        throw new Error('boom after admission');
      }),
    },
    '/inflight/stream': {
      GET: apiKey({ guard, ...peer })((request) => new Response(inflightStream(inflightChunks(new URL(request.url).searchParams)), { headers: { 'content-type': 'text/plain' } })),
    },
    '/inflight/slow': { GET: apiKey({ guard, ...peer })(async (request) => (await aborted(request.signal), new Response('too late'))) },
    '/inflight/status': Object.fromEntries(
      ['GET', 'POST', 'OPTIONS', 'DELETE'].map((method) => [
        method,
        apiKey({ guard, ...peer })((request) => {
          const { status, body } = inflightStatus(new URL(request.url).searchParams);
          return new Response(body, { status, headers: body === null ? {} : { 'content-type': 'text/plain' } });
        }),
      ]),
    ),
    '/inflight/rejects': {
      GET: apiKey({ guard, ...peer })(async () => {
        await Promise.resolve();
        throw new Error('async boom after admission');
      }),
    },
    '/inflight/throws-value': {
      GET: apiKey({ guard, ...peer })(() => {
        throw 'a plain value'; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
      }),
    },
    '/inflight/rethrown': {
      GET: apiKey({ guard, ...peer })(() => {
        throw new Error(RETHROWN);
      }),
    },
    '/inflight/non-error': {
      GET: apiKey({ guard, ...peer })(() => {
        throw new Error(NON_ERROR);
      }),
    },
    '/options/peer': { GET: apiKey({ guard, clientAddress: () => OPTION_PEER })((_request, key) => Response.json({ name: key.name })) },
    '/options/proxied': { GET: apiKey({ guard: fixture.proxyGuard, ...peer })((_request, key) => Response.json({ name: key.name })) },
    '/options/page': {
      GET: async (request) => {
        const page = await paginate(request, paginator, { filters: (_query, req) => ({ tenant: req.headers.get('x-tenant') }) });
        return sendPage(page, fixture.list(page, new URL(request.url).searchParams).rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } });
      },
    },
    '/throws': {
      GET: () => {
        throw new Error('boom: secret detail');
      },
    },
  };
  const methodsAt = (pathname: string): string[] => Object.keys(routes[pathname] ?? {});
  const notFound = notFoundHandler({ allowedMethods: methodsAt });
  const router = async (request: Request, platform?: unknown): Promise<Response> => {
    const at = routes[new URL(request.url).pathname] ?? {};
    // A GET route answers HEAD too (RFC 9110 §9.3.2); the runtime drops the body.
    const route = at[request.method] ?? (request.method === 'HEAD' ? at.GET : undefined);
    return route === undefined ? notFound(request) : route(request, platform);
  };
  const app = checkRequest()(router);
  // The app's own error handling around keyset's: it rethrows one error and throws a string for another.
  const failing = async (request: Request, platform?: unknown): Promise<Response> => {
    try {
      return await app(request, platform);
    } catch (error) {
      if ((error as Error | undefined)?.message === NON_ERROR) throw NON_ERROR; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
      throw error;
    }
  };
  return problemHandler({ onError: (error, _request, status) => fixture.reported.push({ error, status }) })(failing);
}
