import { ERROR_CATALOGUE } from '@keyset/core';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { apiKeySecurity, errorResponses, keySecurity, keysetComponents, pageParameters, pageResponses, problemCodes, type JsonObject } from './index.ts';

/** A document that uses every component, as a user's would after merging them in. */
function documentWith(components: JsonObject): JsonObject {
  const item = { type: 'object', properties: { id: { type: 'integer' } } };
  return {
    openapi: '3.1.0',
    info: { title: 'test', version: '1' },
    security: [...apiKeySecurity],
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          parameters: pageParameters({ sort: true }),
          responses: { ...pageResponses(item), ...errorResponses([404, 405]) },
        },
      },
      '/public': { get: { operationId: 'listPublic', security: [], parameters: pageParameters({ modes: ['cursor'] }), responses: pageResponses(item, { modes: ['cursor'], authenticated: false }) } },
    },
    components,
  };
}

async function expectValid(document: JsonObject): Promise<void> {
  const result = await validate(structuredClone(document) as never);
  expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
}

describe('keysetComponents', () => {
  it('is a valid OpenAPI 3.1 document once merged (checked by @readme/openapi-parser)', async () => {
    await expectValid(documentWith(keysetComponents()));
    await expectValid(documentWith(keysetComponents({ limits: { default: 10, max: 50 }, sortValues: ['-createdAt', 'createdAt'], keyPrefix: 'acme_live' })));
  });

  it('describes the schemes the keyring accepts, and only those (schemes)', async () => {
    expect(Object.keys(keysetComponents().securitySchemes as JsonObject)).toEqual(['ApiKey']);
    expect(keySecurity()).toEqual([...apiKeySecurity]);
    const all = keysetComponents({ schemes: ['X-API-Key', 'Bearer', 'ApiKey'], keyPrefix: 'acme_live' });
    expect(all.securitySchemes).toMatchObject({
      ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization' },
      Bearer: { type: 'http', scheme: 'bearer' },
      XApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    expect(keySecurity(['X-API-Key', 'Bearer'])).toEqual([{ Bearer: [] }, { XApiKey: [] }]);
    expect(Object.keys(keysetComponents({ schemes: ['Bearer'] }).securitySchemes as JsonObject)).toEqual(['Bearer']);
    expect(String(((all.headers as JsonObject)['WWW-Authenticate'] as JsonObject).description)).toContain('`Bearer realm="…"`');
    const document = { ...documentWith(all), security: keySecurity(['ApiKey', 'Bearer', 'X-API-Key']) };
    await expectValid(document);
    for (const schemes of [[], ['Basic'], ['ApiKey', 'ApiKey']]) {
      expect(() => keysetComponents({ schemes: schemes as never }), JSON.stringify(schemes)).toThrow(TypeError);
      expect(() => keySecurity(schemes as never), JSON.stringify(schemes)).toThrow(TypeError);
    }
  });

  it('the validator refuses a broken document (the check above can fail)', async () => {
    const broken = documentWith(keysetComponents());
    (broken.components as JsonObject).parameters = {};
    expect((await validate(structuredClone(broken) as never)).valid).toBe(false);
  });

  it('lists every problem code from core\'s catalogue, so a new code needs no edit here', () => {
    const problem = ((keysetComponents().schemas as JsonObject).Problem as JsonObject).properties as JsonObject;
    expect((problem.code as JsonObject).enum).toEqual([...Object.keys(ERROR_CATALOGUE), 'internal_error']);
    expect(Object.values(problemCodes()).flat().sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
  });

  it('covers the in-flight refusal: 429 concurrency_limited beside rate_limited and quota_exhausted, with max_in_flight', () => {
    expect(problemCodes()[429]).toEqual(['rate_limited', 'quota_exhausted', 'concurrency_limited', 'usage_reads_busy']);
    const problem = ((keysetComponents().schemas as JsonObject).Problem as JsonObject).properties as JsonObject;
    expect(problem.max_in_flight).toMatchObject({ type: 'integer' });
    const tooMany = (keysetComponents().responses as Record<string, JsonObject>).TooManyRequests!;
    expect(tooMany.description).toContain('`concurrency_limited` (Too many requests in progress)');
  });

  it('has the 400, 401, 403, 429 and 503 responses, each narrowed to its codes, with their headers', () => {
    const responses = keysetComponents().responses as Record<string, JsonObject>;
    for (const name of ['BadRequest', 'Unauthorized', 'Forbidden', 'TooManyRequests', 'ServiceUnavailable']) expect(responses[name]).toBeDefined();
    const tooMany = responses.TooManyRequests!;
    expect(Object.keys(tooMany.headers as JsonObject).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    const narrowed = (((tooMany.content as JsonObject)['application/problem+json'] as JsonObject).schema as JsonObject).allOf as JsonObject[];
    expect(((narrowed[1]!.properties as JsonObject).code as JsonObject).enum).toEqual(problemCodes()[429]);
    expect(Object.keys(responses.Unauthorized!.headers as JsonObject)).toEqual(['WWW-Authenticate']);
    expect(Object.keys(responses.MethodNotAllowed!.headers as JsonObject)).toEqual(['Allow']);
  });

  it('describes the parameters as the core parses them', () => {
    const parameters = keysetComponents({ limits: { default: 10, max: 50 }, sortValues: ['-id'] }).parameters as Record<string, JsonObject>;
    expect(parameters.limit!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 50, default: 10 });
    expect(parameters.offset!.schema).toEqual({ type: 'integer', minimum: 0 });
    expect(parameters.sort!.schema).toEqual({ type: 'string', enum: ['-id'] });
    expect(Object.keys(parameters)).toEqual(['limit', 'offset', 'cursor', 'sort']);
  });

  it('describes the key as the Authorization header with the ApiKey scheme, in a form tools can send', () => {
    const scheme = (keysetComponents({ keyPrefix: 'acme_live' }).securitySchemes as JsonObject).ApiKey as JsonObject;
    // `type: http` with `scheme: ApiKey` is what tools cannot send (Scalar sent `Basic …`).
    expect({ type: scheme.type, in: scheme.in, name: scheme.name }).toEqual({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(scheme.description).toContain('`Authorization: ApiKey <key>`');
    expect(scheme.description).toContain('`acme_live_…`');
  });

  it('takes the paginator\'s own limits, overMax included, and describes a clamp as one', () => {
    const limit = (clamp: boolean): JsonObject =>
      ((keysetComponents({ limits: { default: 10, max: 50, overMax: clamp ? 'clamp' : 'reject' } }).parameters as JsonObject).limit as JsonObject);
    expect(limit(false).schema).toEqual({ type: 'integer', minimum: 1, maximum: 50, default: 10 });
    expect(limit(false).description).toContain('`51` or more is 400 `limit_too_large`');
    expect(limit(true).schema).toEqual({ type: 'integer', minimum: 1, default: 10 });
    expect(limit(true).description).toContain('a larger one is served as 50');
  });

  it('refuses an error status keyset does not define', () => {
    expect(() => errorResponses([418])).toThrow(/418/);
  });
});
