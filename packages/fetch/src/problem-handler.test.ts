import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeysetError } from '@keyset/core';
import { expectProblem } from '@keyset/conformance';
import { describe, expect, it } from 'vitest';
import { notFoundHandler, problemHandler, problemResponse } from './index.ts';

const post = (body: string | null, type = 'application/json'): Request =>
  new Request('http://localhost/echo?x=1', { method: 'POST', headers: { 'content-type': type }, ...(body === null ? {} : { body }) });

describe('problemHandler()', () => {
  it('answers a malformed JSON body with 400 invalid_request and reports the error without the body', async () => {
    const reported: { error: unknown; status: number }[] = [];
    const handler = problemHandler({ onError: (error, _request, status) => reported.push({ error, status }) })(async (request) =>
      Response.json(await request.json()));
    const secret = 'conf_test_abcdefghijklmnopqrstuvwxyz012345';
    const body = await expectProblem(await handler(post(`{"key": "${secret}",`)), 400, 'invalid_request');
    expect(body).toMatchObject({ field: 'body', instance: '/echo' });
    expect(reported.map((r) => r.status)).toEqual([400]);
    expect(String((reported[0]?.error as Error).message)).not.toContain('abcdef');
    expect(JSON.stringify(body)).not.toContain('abcdef');
  });

  it('treats an empty body declared as JSON as the client mistake it is (Bun gives it no stream)', async () => {
    const handler = problemHandler()(async (request) => Response.json(await request.json()));
    await expectProblem(await handler(post(null)), 400, 'invalid_request');
  });

  it("answers a SyntaxError that is not the body's with a bare 500", async () => {
    const handler = problemHandler()(() => Response.json(JSON.parse('{broken')));
    await expectProblem(await handler(new Request('http://localhost/x')), 500, 'internal_error');
    await expectProblem(await handler(post(null, 'text/plain')), 500, 'internal_error');
  });

  it('still answers the problem when onError throws', async () => {
    const handler = problemHandler({
        onError: () => {
          throw new Error('logger down');
        },
        typeBase: 'https://errors.example.com/',
      })(
      () => {
        throw new KeysetError('invalid_limit');
      });
    const body = await expectProblem(await handler(new Request('http://localhost/items?limit=0')), 400, 'invalid_limit');
    expect(body.type).toBe('https://errors.example.com/invalid_limit');
  });
});

describe('notFoundHandler() and problemResponse()', () => {
  it('answers 404 not_found with the path as instance', async () => {
    const body = await expectProblem(notFoundHandler()(new Request('http://localhost/nope?api_key=x')), 404, 'not_found');
    expect(body.instance).toBe('/nope');
  });

  it('converts one error, with or without the request', async () => {
    await expectProblem(problemResponse(new Error('boom')), 500, 'internal_error');
    const res = problemResponse(new KeysetError('invalid_offset'), { request: new Request('http://localhost/a/b?offset=x') });
    expect((await expectProblem(res, 400, 'invalid_offset')).instance).toBe('/a/b');
  });
});

describe('@keyset/fetch source', () => {
  it('imports nothing from Node (it runs on Bun, Deno, workerd and in browsers)', () => {
    const src = dirname(fileURLToPath(import.meta.url));
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('testing'),
    );
    expect(files).toContain('index.ts');
    for (const file of files) expect(readFileSync(join(src, file), 'utf8'), file).not.toMatch(/from '(node:|[a-z]+:)|require\(/);
  });
});
