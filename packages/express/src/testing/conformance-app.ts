/**
 * The conformance app (see `@keyset/conformance`) built with
 * `@keyset/express`. Test support only.
 * @module
 */
import express from 'express';
import type { Express } from 'express';
import { inflightChunks, MAX_ECHO_BYTES, OPTION_PEER, PERMITTED_QUERY, inflightStatus, inflightStream, NON_ERROR, RETHROWN } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { Readable, pipeline } from 'node:stream';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '../index.ts';

/** Builds the conformance app over `fixture`. */
export function conformanceApp(fixture: ConformanceFixture): Express {
  const { guard, paginator } = fixture;
  const app = express();
  // `qs` turns `a[b]=c` into objects and repeats into arrays: paginate() must not care.
  app.set('query parser', 'extended');
  app.use(checkRequest());
  const queryOf = (url: string): URLSearchParams => new URL(url, 'http://x').searchParams;
  const list = paginate(paginator, { filters: (query) => fixture.filters(query) });

  app.get('/items', apiKey({ guard, scopes: ['items:read'] }), list, async (req, res) => {
    const { rows, total } = fixture.list(res.locals.page, queryOf(req.originalUrl));
    await sendPage(res, rows, { total });
  });
  app.get('/public/items', list, async (req, res) => {
    const { rows, total } = fixture.list(res.locals.page, queryOf(req.originalUrl));
    await sendPage(res, rows, { total });
  });
  app.get('/whoami', apiKey({ guard }), (_req, res) => {
    const { id, name, last4 } = res.locals.apiKey;
    res.json({ id, name, last4 });
  });
  app.get('/permitted', apiKey({ guard, permissions: PERMITTED_QUERY }), (_req, res) => {
    res.json({ name: res.locals.apiKey.name });
  });
  app.get('/expensive', apiKey({ guard, cost: 2, route: 'GET /expensive' }), (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/whoami/any-scheme', apiKey({ guard: fixture.anySchemeGuard }), (_req, res) => {
    const { id, name, last4 } = res.locals.apiKey;
    res.json({ id, name, last4 });
  });
  app.get('/down', apiKey({ guard: fixture.downGuard }), (_req, res) => {
    res.send('unreachable');
  });
  app.post('/echo', apiKey({ guard }), express.json({ limit: MAX_ECHO_BYTES }), (req, res) => {
    res.json({ received: req.body as unknown });
  });
  app.get('/query', paginate(paginator), (req, res) => {
    res.json(req.query);
  });
  app.get('/inflight/throws', apiKey({ guard }), () => {
    throw new Error('boom after admission');
  });
  app.get('/inflight/stream', apiKey({ guard }), (req, res) => {
    res.type('text/plain');
    pipeline(Readable.fromWeb(inflightStream(inflightChunks(queryOf(req.originalUrl))) as never), res, () => {});
  });
  // Never answers: the request ends when the client goes away.
  app.get('/inflight/slow', apiKey({ guard }), () => {});
  app.all('/inflight/status', apiKey({ guard }), (req, res) => {
    const { status, body } = inflightStatus(queryOf(req.originalUrl));
    res.status(status);
    if (body === null) res.end();
    else res.type('text/plain').send(body);
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
  app.get('/options/peer', apiKey({ guard, clientAddress: () => OPTION_PEER }), (_req, res) => {
    res.json({ name: res.locals.apiKey.name });
  });
  app.get('/options/proxied', apiKey({ guard: fixture.proxyGuard }), (_req, res) => {
    res.json({ name: res.locals.apiKey.name });
  });
  app.get('/options/page', paginate(paginator, { filters: (_query, req) => ({ tenant: req.headers['x-tenant'] ?? null }) }), async (req, res) => {
    await sendPage(res, fixture.list(res.locals.page, queryOf(req.originalUrl)).rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } });
  });
  // Express lists no routes through a documented API: the table the routes above are registered from.
  const routes = [...['/items', '/public/items', '/whoami', '/whoami/any-scheme', '/permitted', '/expensive', '/down', '/query', '/throws', '/options/peer', '/options/proxied', '/options/page'].map((path) => ({ method: 'GET', path })), { method: 'POST', path: '/echo' }];
  app.use(notFoundHandler({ routes }));
  app.use((error: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    if ((error as Error | undefined)?.message === RETHROWN) throw error;
    if ((error as Error | undefined)?.message === NON_ERROR) throw NON_ERROR; // eslint-disable-line @typescript-eslint/only-throw-error -- what the route is for
    next(error);
  });
  app.use(problemHandler({ onError: (error, _req, status) => fixture.reported.push({ error, status }) }));
  return app;
}
