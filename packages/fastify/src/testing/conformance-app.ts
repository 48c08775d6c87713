/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/fastify`.
 * Test support only.
 * @module
 */
import { inflightChunks, inflightStream } from '@keyset/conformance';
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
  const app = Fastify({ frameworkErrors: problemHandler({ onError }) });
  await app.register(keyset, { onError });
  const queryOf = (url: string | undefined): URLSearchParams => new URL(url ?? '/', 'http://x').searchParams;
  const list = paginate(paginator, { filters: (_request, query) => fixture.filters(query) });

  // The key is checked in onRequest, before Fastify reads a body.
  app.get('/items', { onRequest: apiKey({ guard, scopes: ['items:read'] }), preHandler: list }, async (request, reply) => {
    const { rows, total } = fixture.list(request.page, queryOf(request.raw.url));
    return reply.sendPage(rows, { total });
  });
  app.get('/public/items', { preHandler: list }, async (request, reply) => {
    const { rows, total } = fixture.list(request.page, queryOf(request.raw.url));
    return sendPage(reply, rows, { total });
  });
  app.get('/whoami', { onRequest: apiKey({ guard }) }, async (request) => {
    const { id, name, last4 } = request.apiKey;
    return { id, name, last4 };
  });
  app.get('/whoami/any-scheme', { onRequest: apiKey({ guard: fixture.anySchemeGuard }) }, async (request) => {
    const { id, name, last4 } = request.apiKey;
    return { id, name, last4 };
  });
  app.get('/down', { onRequest: apiKey({ guard: fixture.downGuard }) }, async () => 'unreachable');
  app.get('/expensive', { onRequest: apiKey({ guard, cost: 2, route: 'GET /expensive' }) }, async () => ({ ok: true }));
  app.post('/echo', { onRequest: apiKey({ guard }) }, async (request) => ({ received: request.body }));
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
  app.get('/throws', async () => {
    throw new Error('boom: secret detail');
  });
  return app;
}
