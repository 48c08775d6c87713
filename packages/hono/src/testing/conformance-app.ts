/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/hono`.
 * Test support only.
 * @module
 */
import { Hono } from 'hono';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '../index.ts';
import { aborted, inflightChunks, inflightStream } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';

/** Builds the conformance app over `fixture`. */
export function conformanceApp(fixture: ConformanceFixture): Hono {
  const { guard, paginator } = fixture;
  const app = new Hono();
  app.use(checkRequest());
  const queryOf = (url: string): URLSearchParams => new URL(url).searchParams;
  const list = paginate(paginator, { filters: (_c, query) => fixture.filters(query) });

  app.get('/items', apiKey({ guard, scopes: ['items:read'] }), list, (c) => {
    const { rows, total } = fixture.list(c.var.page, queryOf(c.req.url));
    return sendPage(c, rows, { total });
  });
  app.get('/public/items', list, (c) => {
    const { rows, total } = fixture.list(c.get('page'), queryOf(c.req.url));
    return sendPage(c, rows, { total });
  });
  app.get('/whoami', apiKey({ guard }), (c) => {
    const { id, name, last4 } = c.var.apiKey;
    return c.json({ id, name, last4 });
  });
  app.get('/whoami/any-scheme', apiKey({ guard: fixture.anySchemeGuard }), (c) => {
    const { id, name, last4 } = c.var.apiKey;
    return c.json({ id, name, last4 });
  });
  app.get('/down', apiKey({ guard: fixture.downGuard }), (c) => c.text('unreachable'));
  app.get('/expensive', apiKey({ guard, cost: 2, route: 'GET /expensive' }), (c) => c.json({ ok: true }));
  app.post('/echo', apiKey({ guard }), async (c) => c.json({ received: await c.req.json<unknown>() }));
  app.get('/query', paginate(paginator), (c) => c.json(c.req.queries()));
  app.get('/inflight/throws', apiKey({ guard }), () => {
    throw new Error('boom after admission');
  });
  app.get('/inflight/stream', apiKey({ guard }), (c) => c.body(inflightStream(inflightChunks(queryOf(c.req.url))), 200, { 'content-type': 'text/plain' }));
  app.get('/inflight/slow', apiKey({ guard }), async (c) => {
    await aborted(c.req.raw.signal);
    return c.text('too late');
  });
  app.get('/throws', () => {
    throw new Error('boom: secret detail');
  });
  app.notFound(notFoundHandler({ app }));
  app.onError(problemHandler({ onError: (error, _c, status) => fixture.reported.push({ error, status }) }));
  return app;
}
