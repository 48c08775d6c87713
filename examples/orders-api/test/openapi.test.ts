/**
 * `/openapi.json` is a valid OpenAPI 3.1 document (checked by a real validator,
 * @readme/openapi-parser) describing the routes the server really has, on every adapter;
 * `/docs` serves the reference page and its script from this server.
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '@keyset/core';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';
import { ADAPTERS } from '../src/config.ts';

// One database; each adapter serves it (`serveAlso`), so the file starts one PGlite.
let t: TestApi;
beforeAll(async () => {
  t = await startApi({ seedOrders: 50 });
}, 60_000);
afterAll(() => t?.stop({ remove: true }));

describe.each(ADAPTERS)('OpenAPI on %s', (adapter) => {
  let server: ExtraServer;
  let url: string;
  beforeAll(async () => {
    server = await serveAlso(t, adapter);
    url = server.url;
  });
  afterAll(() => server?.close());

  it('serves a document the validator accepts', async () => {
    const res = await call(url, '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const result = await validate(res.body);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(res.body.openapi).toBe('3.1.0');
    // Every problem code the core knows, derived from its catalogue.
    expect(res.body.components.schemas.Problem.properties.code.enum).toEqual([...Object.keys(ERROR_CATALOGUE), 'internal_error']);
  });

  it('documents the orders filters, the sort and the total markers', async () => {
    const { body: document } = await call(t.api.url, '/openapi.json');
    const parameters = document.paths['/api/orders'].get.parameters as { name?: string; $ref?: string; schema?: any; explode?: boolean }[];
    const named = (name: string) => parameters.find((p) => p.name === name || p.$ref === `#/components/parameters/${name}`);
    expect(named('status')).toMatchObject({ in: 'query', explode: true, schema: { type: 'array', items: { enum: ['paid', 'pending', 'refunded', 'cancelled'] } } });
    expect(named('customer')).toMatchObject({ in: 'query', schema: { type: 'string', minLength: 1 } });
    expect(named('sort')).toBeDefined();
    expect(document.components.schemas.OffsetPage.properties).toMatchObject({ totalEstimated: { const: true }, totalAtLeast: { const: true } });
    expect(document.paths['/api/orders'].get.description).toContain('`totalEstimated: true`');
  });

  it('lists 429 concurrency_limited (beside rate_limited) on every route that takes a key', async () => {
    const { body: document } = await call(url, '/openapi.json');
    const guarded = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method, operation]) => method !== 'parameters' && operation.security !== undefined)
        .map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const),
    );
    expect(guarded.length).toBe(28);
    for (const [name, operation] of guarded) {
      const ref = operation.responses['429']?.$ref as string | undefined;
      expect(ref, name).toBe('#/components/responses/TooManyRequests');
      const response = document.components.responses.TooManyRequests;
      const codes = response.content['application/problem+json'].schema.allOf[1].properties.code.enum as string[];
      expect(codes, name).toEqual(expect.arrayContaining(['rate_limited', 'concurrency_limited']));
      expect(response.description).toContain('`concurrency_limited`');
      expect(Object.keys(response.headers)).toContain('Retry-After');
    }
    expect(document.components.schemas.Problem.properties).toHaveProperty('max_in_flight');
  });

  it('describes only routes the server has, with the methods it allows', async () => {
    const { body: document } = await call(url, '/openapi.json');
    const admin = t.api.adminKey!;
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => method !== 'parameters')
        .map((method) => [method.toUpperCase(), path.replace('{id}', 'key_doesnotexist000000000').replace('{name}', 'no-such-role')] as const),
    );
    expect(operations.length).toBe(28); // 9 key and order operations, 6 owner ones, 3 usage ones, the audit log, 9 role ones
    for (const [method, path] of operations) {
      const res = await call(url, path, { key: admin, method, ...(method === 'POST' ? { body: {} } : {}) });
      // A documented route exists: it may refuse the key's scope or the id, never the route itself.
      expect(res.status, `${method} ${path}`).not.toBe(405);
      if (res.status === 404) expect(res.body.detail, `${method} ${path}`).not.toBe('No resource matches this path.');
    }
  });

  it('serves /docs and its script from this server', async () => {
    const page = await call(url, '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('<script src="/docs/scalar.js"></script>');
    expect(page.text).not.toMatch(/https?:\/\//);
    const script = await fetch(`${url}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const text = await script.text();
    expect(text.length).toBeGreaterThan(100_000);
    expect(text).toContain('createApiReference');
    expect(text).not.toContain('fonts.scalar.com');
  });
});
