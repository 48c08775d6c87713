/**
 * The problems of the adapter conformance suite that are not about keys or pages: an
 * unknown path or method, a path that is not UTF-8, a malformed JSON body, the key checked
 * before the body, and a server bug (a bare 500 that is reported). Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import type { ConformanceRun } from './conformance-run.ts';
import { expectProblem } from './expect-problem.ts';

/** Registers the problem checks. */
export function describeProblemConformance(run: ConformanceRun): void {
  const { get } = run;
  describe('problems', () => {
    it('answers an unknown path with 404 not_found', async () => {
      const body = await expectProblem(await get('/nope?x=1'), 404, 'not_found');
      expect(body.instance).toBe('/nope');
    });

    it('answers a path that is not valid percent-encoded UTF-8 with 400 invalid_request naming the path', async () => {
      // Fastify's router refuses it, Express's fails to decode a `:param`, Hono and `Request`
      // URLs keep it: core's policy decides, the same on every adapter.
      for (const path of ['/items%ZZ', '/nope/%E0%A4%A', '/nope/%E0%A4']) {
        const body = await expectProblem(await get(path, run.reader), 400, 'invalid_request');
        expect(body, path).toMatchObject({ field: 'path', instance: path, detail: 'The request path is not valid percent-encoded UTF-8.' });
      }
      // The query is not the path: a bad escape there is the parameter's business.
      expect((await get('/public/items?x=%ZZ')).status).toBe(200);
    });

    it('answers a known path with the wrong method with 405 method_not_allowed and Allow', async () => {
      // Before authentication: the method is wrong whoever asks (RFC 9110 §15.5.6).
      const post = await get('/items?limit=1', { method: 'POST', ...run.reader });
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      const body = await expectProblem(post, 405, 'method_not_allowed');
      expect(body).toMatchObject({ instance: '/items', allowed_methods: ['GET', 'HEAD'] });
      const del = await get('/echo', { method: 'DELETE' });
      expect(del.headers.get('allow')).toBe('POST');
      await expectProblem(del, 405, 'method_not_allowed');
      // GET implies HEAD, and an unknown path stays a 404 whatever the method.
      expect((await get('/whoami', { method: 'HEAD', ...run.reader })).status).toBe(200);
      await expectProblem(await get('/nope', { method: 'POST' }), 404, 'not_found');
    });

    it('answers a malformed JSON body with 400 invalid_request naming the body', async () => {
      const res = await get('/echo', {
        method: 'POST',
        headers: { authorization: `ApiKey ${run.fixture.keys.reader}`, 'content-type': 'application/json' },
        body: `{"key": "${run.fixture.keys.reader}",`,
      });
      const body = await expectProblem(res, 400, 'invalid_request');
      expect(body.field).toBe('body');
      expect(JSON.stringify(body)).not.toContain(run.fixture.keys.reader);
    });

    it('checks the key before the body: a malformed body with no key or a bad key is 401', async () => {
      const post = (headers: Record<string, string>): RequestInit => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"a":',
      });
      await expectProblem(await get('/echo', post({})), 401, 'missing_api_key');
      await expectProblem(await get('/echo', post({ authorization: 'ApiKey nope' })), 401, 'invalid_api_key');
    });

    it('accepts a valid JSON body', async () => {
      const res = await get('/echo', {
        method: 'POST',
        headers: { authorization: `ApiKey ${run.fixture.keys.reader}`, 'content-type': 'application/json' },
        body: '{"a":[1,"✓"]}',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: { a: [1, '✓'] } });
    });

    it('answers a server bug with a bare 500 problem and reports the error', async () => {
      const before = (await run.fixture.reports()).length;
      const res = await get('/throws');
      const body = await expectProblem(res, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('boom');
      const reported = (await run.fixture.reports()).slice(before);
      expect(reported).toEqual([{ status: 500, message: 'boom: secret detail' }]);
    });
  });
}
