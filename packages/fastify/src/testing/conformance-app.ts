/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/fastify`.
 * Test support only.
 * @module
 */
import { inflightChunks, MAX_ECHO_BYTES, OPTION_PEER, PERMITTED_QUERY, inflightStatus, inflightStream, NON_ERROR, RETHROWN } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { apiKey, keyset, paginate, problemHandler, sendPage } from '../index.ts';

/** Builds the conformance app over `fixture` (not yet listening). */
export async function conformanceApp(fixture: ConformanceFixture): Promise<FastifyInstance> {
  const { guard, paginator } = fixture;
  const onError = (error: unknown, _request: unknown, status: number): void => {
    fixture.reported.push({ error, status });
  };
  // A bad %-encoding in the path never reaches the error handler: `frameworkErrors` does.
  // `close()` ends every connection: the in-flight checks leave undici a kept-alive socket
  // it opened but never sent a request on, which Node counts as busy (not idle) until its
  // headers timeout, so a plain close waited 60 s for it.
  const app = Fastify({ frameworkErrors: problemHandler({ onError }), forceCloseConnections: true });
  // The keyset plugin installs keyset's problemHandler() as the app's error handler (unless
  // told `handlers: false`, and then the app sets its own).
  await app.register(keyset, { onError });
  // The route-level error handler of the two routes whose error handler fails; keyset's answers after it.
  const failing = (error: Error): never => {
    if (error.message === NON_ERROR) throw NON_ERROR; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
    throw error;
  };
  const queryOf = (url: string | undefined): URLSearchParams => new URL(url ?? '/', 'http://x').searchParams;
  const list = paginate(paginator, { filters: (query) => fixture.filters(query) });

  // The key is checked in onRequest, before Fastify reads a body.
  app.get('/items', { onRequest: apiKey({ guard, scopes: ['items:read'] }), preHandler: list }, async (request, reply) => {
    const { rows, total } = fixture.list(request.page, queryOf(request.raw.url));
    return sendPage(reply, rows, { total });
  });
  app.get('/public/items', { preHandler: list }, async (request, reply) => {
    const { rows, total } = fixture.list(request.page, queryOf(request.raw.url));
    return sendPage(reply, rows, { total });
  });
  app.get('/whoami', { onRequest: apiKey({ guard }) }, async (request) => {
    const { id, name, last4 } = request.apiKey;
    return { id, name, last4 };
  });
  app.get('/permitted', { onRequest: apiKey({ guard, permissions: PERMITTED_QUERY }) }, async (request) => ({ name: request.apiKey.name }));
  app.get('/whoami/any-scheme', { onRequest: apiKey({ guard: fixture.anySchemeGuard }) }, async (request) => {
    const { id, name, last4 } = request.apiKey;
    return { id, name, last4 };
  });
  app.get('/down', { onRequest: apiKey({ guard: fixture.downGuard }) }, async () => 'unreachable');
  app.get('/expensive', { onRequest: apiKey({ guard, cost: 2, route: 'GET /expensive' }) }, async () => ({ ok: true }));
  app.post('/echo', { onRequest: apiKey({ guard }), bodyLimit: MAX_ECHO_BYTES }, async (request) => ({ received: request.body }));
  app.get('/query', { preHandler: paginate(paginator) }, async (request) => request.query);
  app.get('/inflight/throws', { onRequest: apiKey({ guard }) }, async () => {
    throw new Error('boom after admission');
  });
  app.get('/inflight/stream', { onRequest: apiKey({ guard }) }, async (request, reply) =>
    reply.type('text/plain').send(Readable.fromWeb(inflightStream(inflightChunks(queryOf(request.raw.url))) as never)),
  );
  app.get('/inflight/slow', { onRequest: apiKey({ guard }) }, async (_request, reply) => {
    await new Promise((resolve) => reply.raw.on('close', resolve));
    return 'too late';
  });
  app.route({
    method: ['GET', 'POST', 'OPTIONS', 'DELETE'],
    url: '/inflight/status',
    onRequest: apiKey({ guard }),
    handler: async (request, reply) => {
      const { status, body } = inflightStatus(queryOf(request.raw.url));
      reply.code(status);
      return body === null ? reply.send() : reply.type('text/plain').send(body);
    },
  });
  app.get('/inflight/rejects', { onRequest: apiKey({ guard }) }, async () => {
    await Promise.resolve();
    throw new Error('async boom after admission');
  });
  app.get('/inflight/throws-value', { onRequest: apiKey({ guard }) }, async () => {
    throw 'a plain value'; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
  });
  app.get('/inflight/rethrown', { onRequest: apiKey({ guard }), errorHandler: failing }, async () => {
    throw new Error(RETHROWN);
  });
  app.get('/inflight/non-error', { onRequest: apiKey({ guard }), errorHandler: failing }, async () => {
    throw new Error(NON_ERROR);
  });
  app.get('/throws', async () => {
    throw new Error('boom: secret detail');
  });
  app.get('/options/peer', { onRequest: apiKey({ guard, clientAddress: () => OPTION_PEER }) }, async (request) => ({ name: request.apiKey.name }));
  app.get('/options/proxied', { onRequest: apiKey({ guard: fixture.proxyGuard }) }, async (request) => ({ name: request.apiKey.name }));
  app.get('/options/page', { preHandler: paginate(paginator, { filters: (_query, request) => ({ tenant: request.headers['x-tenant'] ?? null }) }) }, async (request, reply) =>
    sendPage(reply, fixture.list(request.page, queryOf(request.raw.url)).rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } }),
  );
  return app;
}
