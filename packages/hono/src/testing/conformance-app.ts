/**
 * The conformance app (see `@keyset/conformance`) built with `@keyset/hono`.
 * Test support only.
 * @module
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '../index.ts';
import { aborted, inflightChunks, MAX_ECHO_BYTES, OPTION_PEER, PERMITTED_QUERY, inflightStatus, inflightStream, NON_ERROR, RETHROWN } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import type { StatusCode } from 'hono/utils/http-status';

/** Builds the conformance app over `fixture`. */
export function conformanceApp(fixture: ConformanceFixture): Hono {
  const { guard, paginator } = fixture;
  const app = new Hono();
  app.use(checkRequest());
  const queryOf = (url: string): URLSearchParams => new URL(url).searchParams;
  const list = paginate(paginator, { filters: (query) => fixture.filters(query) });

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
  app.get('/permitted', apiKey({ guard, permissions: PERMITTED_QUERY }), (c) => c.json({ name: c.var.apiKey.name }));
  app.get('/down', apiKey({ guard: fixture.downGuard }), (c) => c.text('unreachable'));
  app.get('/expensive', apiKey({ guard, cost: 2, route: 'GET /expensive' }), (c) => c.json({ ok: true }));
  // A body over 16 KiB is 413, as Hono's bodyLimit() answers it.
  const limit = bodyLimit({ maxSize: MAX_ECHO_BYTES, onError: () => { throw new HTTPException(413, { message: 'The request body is larger than this route accepts.' }); } });
  app.post('/echo', apiKey({ guard }), limit, async (c) => c.json({ received: await c.req.json<unknown>() }));
  app.get('/query', paginate(paginator), (c) => c.json(c.req.queries()));
  app.get('/inflight/throws', apiKey({ guard }), () => {
    throw new Error('boom after admission');
  });
  app.get('/inflight/stream', apiKey({ guard }), (c) => c.body(inflightStream(inflightChunks(queryOf(c.req.url))), 200, { 'content-type': 'text/plain' }));
  app.get('/inflight/slow', apiKey({ guard }), async (c) => {
    await aborted(c.req.raw.signal);
    return c.text('too late');
  });
  app.on(['GET', 'POST', 'OPTIONS', 'DELETE'], '/inflight/status', apiKey({ guard }), (c) => {
    const { status, body } = inflightStatus(queryOf(c.req.url));
    return body === null ? c.body(null, status as StatusCode) : c.text(body, status as never);
  });
  app.get('/inflight/rejects', apiKey({ guard }), async () => {
    await Promise.resolve();
    throw new Error('async boom after admission');
  });
  app.get('/inflight/throws-value', apiKey({ guard }), () => {
    throw 'a plain value'; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
  });
  app.get('/inflight/rethrown', apiKey({ guard }), () => {
    throw new Error(RETHROWN);
  });
  app.get('/inflight/non-error', apiKey({ guard }), () => {
    throw new Error(NON_ERROR);
  });
  app.get('/throws', () => {
    throw new Error('boom: secret detail');
  });
  app.get('/options/peer', apiKey({ guard, clientAddress: () => OPTION_PEER }), (c) => c.json({ name: c.var.apiKey.name }));
  app.get('/options/proxied', apiKey({ guard: fixture.proxyGuard }), (c) => c.json({ name: c.var.apiKey.name }));
  app.get('/options/page', paginate(paginator, { filters: (_query, c) => ({ tenant: c.req.header('x-tenant') ?? null }) }), (c) =>
    sendPage(c, fixture.list(c.var.page, queryOf(c.req.url)).rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } }),
  );
  app.notFound(notFoundHandler({ app }));
  const answer = problemHandler({ onError: (error, _c, status) => fixture.reported.push({ error, status }) });
  app.onError((error, c) => {
    if (error.message === RETHROWN) throw error;
    if (error.message === NON_ERROR) throw NON_ERROR; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
    return answer(error, c);
  });
  return app;
}
