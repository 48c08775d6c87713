import { KeysetError } from '@keyset/core';
import express from 'express';
import type { Express, RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { expectProblem } from '@keyset/conformance';
import { notFoundHandler, problemHandler } from './index.ts';
import type { NotFoundHandlerOptions, ProblemHandlerOptions } from './index.ts';
import { listen } from './testing/listen.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(routes: (app: Express) => void, options: ProblemHandlerOptions = {}, notFound: NotFoundHandlerOptions = {}): Promise<string> {
  const app = express();
  routes(app);
  app.use(notFoundHandler(notFound));
  app.use(problemHandler(options));
  const server = await listen(app);
  servers.push(server);
  return server.origin;
}

const throwing =
  (error: unknown): RequestHandler =>
  () => {
    throw error;
  };

const postJson = (body: string, type = 'application/json'): RequestInit => ({ method: 'POST', body, headers: { 'content-type': type } });

describe('problemHandler() for Express', () => {
  it('sends a keyset error with its status, extensions and headers; instance has no query', async () => {
    const error = new KeysetError('rate_limited', { extensions: { hint: 'slow down' }, headers: { 'retry-after': '7' } });
    const origin = await serve((app) => app.get('/boom', throwing(error)));
    const res = await fetch(`${origin}/boom?key=abc`);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await expectProblem(res, 429, 'rate_limited')).toMatchObject({ hint: 'slow down', instance: '/boom' });
  });

  it('also catches errors from async handlers', async () => {
    const origin = await serve((app) =>
      app.get('/', async () => {
        await Promise.resolve();
        throw new KeysetError('invalid_request', { detail: 'nope', extensions: { field: 'date' } });
      }),
    );
    expect(await expectProblem(await fetch(origin), 400, 'invalid_request')).toMatchObject({ field: 'date', detail: 'nope' });
  });

  it('uses typeBase for the problem type', async () => {
    const origin = await serve((app) => app.get('/', throwing(new KeysetError('invalid_request'))), { typeBase: 'https://docs.example.com/problems/' });
    expect(await (await fetch(origin)).json()).toMatchObject({ type: 'https://docs.example.com/problems/invalid_request' });
  });

  it("answers body-parser's malformed JSON with 400 invalid_request, never echoing the body", async () => {
    const origin = await serve((app) => app.post('/', express.json(), (req, res) => res.json(req.body)));
    for (const text of ['{', '{"key":"acme_live_secret"', 'nul', '[1,]']) {
      const body = await expectProblem(await fetch(origin, postJson(text)), 400, 'invalid_request');
      expect(body).toMatchObject({ field: 'body', detail: 'The request body is not valid JSON.' });
      expect(JSON.stringify(body)).not.toContain('secret');
    }
  });

  it("keeps body-parser's own 4xx status: 413 too large, 415 unsupported charset", async () => {
    const origin = await serve((app) => app.post('/', express.json({ limit: 10 }), (req, res) => res.json(req.body)));
    await expectProblem(await fetch(origin, postJson(JSON.stringify({ long: 'x'.repeat(100) }))), 413, 'invalid_request');
    await expectProblem(await fetch(origin, postJson('{}', 'application/json; charset=klingon')), 415, 'invalid_request');
  });

  it('maps other client errors by status: 404 → not_found, 4xx → invalid_request with their message if exposed', async () => {
    const gone = Object.assign(new Error('gone'), { status: 404 });
    const exposed = Object.assign(new Error('Range not satisfiable'), { statusCode: 416, expose: true });
    const hidden = Object.assign(new Error('internal detail'), { status: 400 });
    const origin = await serve((app) => {
      app.get('/gone', throwing(gone));
      app.get('/exposed', throwing(exposed));
      app.get('/hidden', throwing(hidden));
    });
    await expectProblem(await fetch(`${origin}/gone`), 404, 'not_found');
    expect(await expectProblem(await fetch(`${origin}/exposed`), 416, 'invalid_request')).toMatchObject({ detail: 'Range not satisfiable' });
    expect(await expectProblem(await fetch(`${origin}/hidden`), 400, 'invalid_request')).toMatchObject({ detail: 'The request could not be processed.' });
  });

  it('turns anything else into a bare 500, reported to onError', async () => {
    const reported: { error: unknown; status: number }[] = [];
    const errors = [new TypeError('x is undefined: secret'), Object.assign(new Error('upstream secret'), { status: 502 }), 'a thrown secret string'];
    const origin = await serve(
      (app) => errors.forEach((error, i) => app.get(`/${i}`, throwing(error))),
      { onError: (error, _req, status) => reported.push({ error, status }) },
    );
    for (let i = 0; i < errors.length; i += 1) {
      const body = await expectProblem(await fetch(`${origin}/${i}`), 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('secret');
    }
    expect(reported).toEqual(errors.map((error) => ({ error, status: 500 })));
  });

  it('still answers when onError itself throws', async () => {
    const origin = await serve((app) => app.get('/', throwing(new Error('bug'))), {
      onError: () => {
        throw new Error('logger down');
      },
    });
    await expectProblem(await fetch(origin), 500, 'internal_error');
  });

  it('leaves a response that already started to Express', async () => {
    const reported: unknown[] = [];
    const origin = await serve(
      (app) =>
        app.get('/', (_req, res, next) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          next(new Error('late'));
        }),
      { onError: (error) => reported.push(error) },
    );
    const res = await fetch(origin);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(reported).toEqual([]);
  });

  it('answers unknown paths with 404 not_found, HEAD included', async () => {
    const origin = await serve(() => {});
    const body = await expectProblem(await fetch(`${origin}/a/b?c=d`), 404, 'not_found');
    expect(body.instance).toBe('/a/b');
    const head = await fetch(`${origin}/a`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(head.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await head.text()).toBe('');
  });

  it("answers the router's own bad percent-encoding with a 400 problem", async () => {
    const origin = await serve((app) => app.get('/users/:id', (req, res) => res.send(req.params.id)));
    await expectProblem(await fetch(`${origin}/users/%E0%A4%A`), 400, 'invalid_request');
  });
});

describe('problemHandler() for Express: no request body in what onError sees', () => {
  const secret = '0123456789abcdefghijABCDEFGHIJklmnopqr';
  const windows = Array.from({ length: secret.length - 4 }, (_, i) => secret.slice(i, i + 5));

  it('reports a malformed JSON body without its text (body-parser keeps the whole body in `body`)', async () => {
    const { inspect } = await import('node:util');
    const reported: unknown[] = [];
    const origin = await serve((app) => app.post('/', express.json(), (req, res) => res.json(req.body)), { onError: (error) => reported.push(error) });
    for (const text of [`{"a": ak_${secret}}`, `{"key":"ak_${secret}" junk}`, `{"key":"ak_${secret}"`]) {
      await expectProblem(await fetch(origin, postJson(text)), 400, 'invalid_request');
    }
    expect(reported).toHaveLength(3);
    for (const error of reported) {
      const e = error as Error & { cause?: unknown; type?: unknown; status?: unknown };
      expect(e).toBeInstanceOf(SyntaxError);
      expect(e).toMatchObject({ type: 'entity.parse.failed', status: 400 });
      const text = [e.message, String(e.stack), inspect(e, { showHidden: true, depth: 5 }), JSON.stringify(e)].join('\n');
      for (const w of windows) expect(text).not.toContain(w);
    }
  });
});

describe('notFoundHandler() for Express', () => {
  it('answers 405 with Allow for a path the route table has under other methods (mounted routers listed with their prefix)', async () => {
    const routes = [
      { method: 'get', path: '/things/:id' },
      { method: 'delete', path: '/things/:id' },
      { method: 'post', path: '/v1/jobs' },
    ];
    const origin = await serve(
      (app) => {
        app.get('/things/:id', (_req, res) => void res.json({}));
        app.delete('/things/:id', (_req, res) => void res.status(204).end());
        const v1 = express.Router();
        v1.post('/jobs', (_req, res) => void res.status(201).json({}));
        app.use('/v1', v1);
      },
      {},
      { routes },
    );
    const put = await fetch(`${origin}/things/7`, { method: 'PUT' });
    expect(put.headers.get('allow')).toBe('GET, HEAD, DELETE');
    expect(await expectProblem(put, 405, 'method_not_allowed')).toMatchObject({ instance: '/things/7' });
    const get = await fetch(`${origin}/v1/jobs`);
    expect(get.headers.get('allow')).toBe('POST');
    await expectProblem(get, 405, 'method_not_allowed');
    await expectProblem(await fetch(`${origin}/v1/nope`, { method: 'POST' }), 404, 'not_found');
    await expectProblem(await fetch(`${origin}/things`, { method: 'PUT' }), 404, 'not_found');
  });

  it('without routes, every unmatched request is a 404 (Express documents no route listing)', async () => {
    const origin = await serve((app) => {
      app.get('/things', (_req, res) => void res.json({}));
    });
    await expectProblem(await fetch(`${origin}/things`, { method: 'POST' }), 404, 'not_found');
  });
});
