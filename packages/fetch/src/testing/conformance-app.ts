/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/fetch`: one
 * `Request → Response` function, the same on Node, Bun, Deno and workerd.
 * Test support only.
 * @module
 */
import { aborted, inflightChunks, inflightStream } from '@keyset/conformance/fixture';
import type { ConformanceFixture } from '@keyset/conformance/fixture';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '../index.ts';
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
    '/items': { GET: apiKey({ guard, scopes: ['items:read'], ...peer }, list) },
    '/public/items': { GET: list },
    '/whoami': { GET: apiKey({ guard, ...peer }, (_request, { id, name, last4 }) => Response.json({ id, name, last4 })) },
    '/whoami/any-scheme': { GET: apiKey({ guard: fixture.anySchemeGuard, ...peer }, (_request, { id, name, last4 }) => Response.json({ id, name, last4 })) },
    '/down': { GET: apiKey({ guard: fixture.downGuard, ...peer }, () => new Response('unreachable')) },
    '/expensive': { GET: apiKey({ guard, ...peer, cost: 2, route: 'GET /expensive' }, () => Response.json({ ok: true })) },
    '/echo': { POST: apiKey({ guard, ...peer }, async (request) => Response.json({ received: (await request.json()) as unknown })) },
    '/query': {
      GET: async (request) => {
        await paginate(request, paginator);
        return Response.json([...new URL(request.url).searchParams]);
      },
    },
    '/inflight/throws': {
      GET: apiKey({ guard, ...peer }, () => {
        throw new Error('boom after admission');
      }),
    },
    '/inflight/stream': {
      GET: apiKey({ guard, ...peer }, (request) => new Response(inflightStream(inflightChunks(new URL(request.url).searchParams)), { headers: { 'content-type': 'text/plain' } })),
    },
    '/inflight/slow': { GET: apiKey({ guard, ...peer }, async (request) => (await aborted(request.signal), new Response('too late'))) },
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
  return problemHandler({ onError: (error, _request, status) => fixture.reported.push({ error, status }) }, checkRequest(router));
}
