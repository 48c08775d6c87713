import { KeysetError } from '@keyset/core';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { validator } from 'hono/validator';
import { describe, expect, it } from 'vitest';
import { notFoundHandler, problemHandler } from './index.ts';
import { expectProblem } from '@keyset/conformance';

function appThrowing(error: unknown, reported: { error: unknown; status: number }[] = []): Hono {
  const app = new Hono();
  app.get('/boom', () => {
    throw error;
  });
  app.onError(problemHandler({ onError: (e, _c, status) => reported.push({ error: e, status }) }));
  return app;
}

describe('problemHandler() for Hono', () => {
  it('sends a keyset error with its status, extensions and headers', async () => {
    const error = new KeysetError('rate_limited', { extensions: { hint: 'slow down' }, headers: { 'retry-after': '7' } });
    const res = await appThrowing(error).request('/boom?key=abc');
    expect(res.headers.get('retry-after')).toBe('7');
    const body = await expectProblem(res, 429, 'rate_limited');
    expect(body).toMatchObject({ hint: 'slow down', instance: '/boom', type: 'urn:keyset:problem:rate_limited' });
  });

  it('uses typeBase for the problem type', async () => {
    const app = new Hono();
    app.get('/', () => {
      throw new KeysetError('invalid_request');
    });
    app.onError(problemHandler({ typeBase: 'https://docs.example.com/problems/' }));
    app.notFound(notFoundHandler({ typeBase: 'https://docs.example.com/problems/' }));
    expect((await (await app.request('/')).json()) as object).toMatchObject({ type: 'https://docs.example.com/problems/invalid_request' });
    expect((await (await app.request('/x')).json()) as object).toMatchObject({ type: 'https://docs.example.com/problems/not_found' });
  });

  it('turns a 4xx HTTPException into invalid_request, keeping its status and headers', async () => {
    const res401 = new Response('no', { status: 401, headers: { 'www-authenticate': 'Basic realm="x"' } });
    const res = await appThrowing(new HTTPException(401, { res: res401, message: 'Unauthorized' })).request('/boom');
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="x"');
    expect(await expectProblem(res, 401, 'invalid_request')).toMatchObject({ detail: 'Unauthorized' });
    const teapot = await expectProblem(await appThrowing(new HTTPException(418)).request('/boom'), 418, 'invalid_request');
    expect(teapot.detail).toBe('The request could not be processed.');
  });

  it('turns an HTTPException 404 into not_found', async () => {
    await expectProblem(await appThrowing(new HTTPException(404, { message: 'gone' })).request('/boom'), 404, 'not_found');
  });

  it('turns a 5xx HTTPException or any other error into a bare, reported 500', async () => {
    for (const error of [new HTTPException(503, { message: 'db secret' }), new TypeError('x is undefined: secret'), new ConfigErrorLike()]) {
      const reported: { error: unknown; status: number }[] = [];
      const res = await appThrowing(error, reported).request('/boom');
      const body = await expectProblem(res, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('secret');
      expect(reported).toEqual([{ error, status: 500 }]);
    }
  });

  it("answers bodyLimit's 413 with a problem", async () => {
    const app = new Hono();
    app.post('/', bodyLimit({ maxSize: 8 }), async (c) => c.json(await c.req.json()));
    app.onError(problemHandler());
    const res = await app.request('/', { method: 'POST', body: JSON.stringify({ long: 'x'.repeat(100) }), headers: { 'content-type': 'application/json' } });
    await expectProblem(res, 413, 'invalid_request');
  });

  it("answers the json validator's malformed-JSON exception with 400 invalid_request", async () => {
    const app = new Hono();
    app.post('/', validator('json', (value) => value), (c) => c.json(c.req.valid('json')));
    app.onError(problemHandler());
    const res = await app.request('/', { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
    await expectProblem(res, 400, 'invalid_request');
  });

  it('answers malformed JSON read by c.req.json() with 400 invalid_request naming the body', async () => {
    const app = new Hono();
    app.post('/', async (c) => c.json(await c.req.json()));
    app.onError(problemHandler());
    for (const text of ['{', '', 'nul', '{"a":1}}']) {
      const res = await app.request('/', { method: 'POST', body: text, headers: { 'content-type': 'application/json' } });
      expect(await expectProblem(res, 400, 'invalid_request')).toMatchObject({ field: 'body', detail: 'The request body is not valid JSON.' });
    }
  });

  it("keeps a server's own SyntaxError a 500, even after a valid body was read", async () => {
    const app = new Hono();
    app.post('/', async (c) => {
      await c.req.json();
      return c.json(JSON.parse('{corrupt row'));
    });
    app.get('/', (c) => c.json(JSON.parse('{corrupt row')));
    app.onError(problemHandler());
    const post = await app.request('/', { method: 'POST', body: '{"ok":true}', headers: { 'content-type': 'application/json' } });
    await expectProblem(post, 500, 'internal_error');
    await expectProblem(await app.request('/'), 500, 'internal_error');
  });

  it('still answers when onError itself throws', async () => {
    const app = new Hono();
    app.get('/', () => {
      throw new Error('bug');
    });
    app.onError(
      problemHandler({
        onError: () => {
          throw new Error('logger down');
        },
      }),
    );
    await expectProblem(await app.request('/'), 500, 'internal_error');
  });

  it('answers unknown paths with a 404 not_found problem (HEAD without a body)', async () => {
    const app = new Hono();
    app.notFound(notFoundHandler());
    const body = await expectProblem(await app.request('/a/b?c=d'), 404, 'not_found');
    expect(body.instance).toBe('/a/b');
    const head = await app.request('/a', { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(head.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

class ConfigErrorLike extends Error {
  override name = 'ConfigError';
}

describe('problemHandler() for Hono: no request body in what onError sees', () => {
  it("reports c.req.json()'s SyntaxError without the body excerpt V8 quotes", async () => {
    const { inspect } = await import('node:util');
    const secret = '0123456789abcdefghijABCDEFGHIJklmnopqr';
    const windows = Array.from({ length: secret.length - 4 }, (_, i) => secret.slice(i, i + 5));
    const reported: unknown[] = [];
    const app = new Hono();
    app.post('/', async (c) => c.json(await c.req.json()));
    app.onError(problemHandler({ onError: (error) => reported.push(error) }));
    for (const text of [`{"a": ak_${secret}}`, `{"key":"ak_${secret}" junk}`, `[1, 2, 3, ak_${secret}]`]) {
      const res = await app.request('/', { method: 'POST', body: text, headers: { 'content-type': 'application/json' } });
      await expectProblem(res, 400, 'invalid_request');
    }
    expect(reported).toHaveLength(3);
    for (const error of reported) {
      expect(error).toBeInstanceOf(SyntaxError);
      const e = error as Error;
      const text = [e.message, String(e.stack), inspect(e, { showHidden: true, depth: 5 }), JSON.stringify(e)].join('\n');
      for (const w of windows) expect(text).not.toContain(w);
    }
  });
});

describe('notFoundHandler() for Hono', () => {
  const app = new Hono();
  app.use('*', async (_c, next) => next()); // middleware (method ALL) allows nothing by itself
  app.get('/things/:id', (c) => c.json({}));
  app.delete('/things/:id', (c) => c.body(null, 204));
  const v1 = new Hono();
  v1.post('/jobs', (c) => c.json({}, 201));
  app.route('/v1', v1);
  app.notFound(notFoundHandler({ app }));
  app.onError(problemHandler());

  it('answers 405 with Allow for a path known under other methods, sub-apps included', async () => {
    const put = await app.request('/things/7', { method: 'PUT' });
    expect(put.headers.get('allow')).toBe('GET, HEAD, DELETE');
    expect(await expectProblem(put, 405, 'method_not_allowed')).toMatchObject({ instance: '/things/7' });
    const get = await app.request('/v1/jobs');
    expect(get.headers.get('allow')).toBe('POST');
    await expectProblem(get, 405, 'method_not_allowed');
    await expectProblem(await app.request('/v1/nope', { method: 'POST' }), 404, 'not_found');
  });

  it('without the app, every unmatched request is a 404', async () => {
    const bare = new Hono();
    bare.get('/things', (c) => c.json({}));
    bare.notFound(notFoundHandler());
    await expectProblem(await bare.request('/things', { method: 'POST' }), 404, 'not_found');
  });
});
