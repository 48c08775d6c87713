/**
 * A key sent in a form keyset does not read (`Authorization: Bearer <key>`, `X-API-Key`)
 * is told so (401 `unsupported_auth_scheme`, saying where the key goes), not "Missing API
 * key"; a request with no credentials at all still gets `missing_api_key`. Both carry the
 * ApiKey challenge, neither reaches the store, and neither echoes the key. Through the guard
 * adapters call, mapped with `toProblem` as adapters do.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, toProblem, type AuthenticationError } from '../errors.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { credentialsRefusal } from './authorization-header.ts';
import { generateKey } from './key-format.ts';
import type { KeyStore } from './key-store.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from './memory-key-store.ts';

const PREFIX = 'acme_live';
const URL_ = 'https://api.test/api/orders';
const KEY = generateKey(PREFIX);

function setup() {
  let lookups = 0;
  const store = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(createMemoryKeyStore())) {
    store[name] = (...args: unknown[]) => {
      lookups++;
      return (fn as (...a: unknown[]) => unknown)(...args);
    };
  }
  const keyring = createKeyring({ store: store as unknown as KeyStore, prefix: PREFIX, lastUsed: false });
  const guard = createApiKeyGuard({ keyring, realm: 'orders', refusedCredentials: false });
  return { guard, lookups: () => lookups };
}

async function problemOf(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return { problem: toProblem(error), error: error as AuthenticationError };
  }
  throw new Error('expected the guard to refuse');
}

describe('unsupported_auth_scheme in the catalogue', () => {
  it('is a 401 of its own, titled for what happened', () => {
    expect(ERROR_CATALOGUE.unsupported_auth_scheme).toEqual({ status: 401, title: 'Unsupported authentication scheme' });
    expect(ERROR_CATALOGUE.missing_api_key.title).toBe('Missing API key');
  });
});

describe('createApiKeyGuard: credentials in a form keyset does not read', () => {
  it.each([
    ['Bearer', `Bearer ${KEY}`],
    ['Basic', `Basic ${btoa(`${KEY}:`)}`],
    ['Token', `Token token=${KEY}`],
    ['Api-Key', `Api-Key ${KEY}`],
    ['ApiKeys', `ApiKeys ${KEY}`],
    ['bearer', `bearer   ${KEY}  `],
  ])('Authorization: %s <key> → 401 unsupported_auth_scheme naming the scheme and the ApiKey form', async (scheme, authorization) => {
    const { guard, lookups } = setup();
    const { problem, error } = await problemOf(guard.check({ authorization, url: URL_ }));
    expect(problem.status).toBe(401);
    expect(problem.body).toMatchObject({ code: 'unsupported_auth_scheme', title: 'Unsupported authentication scheme' });
    expect(problem.body.detail).toBe(`The Authorization header uses the \`${scheme}\` scheme: send the API key as \`Authorization: ApiKey <key>\`.`);
    expect(problem.headers['www-authenticate']).toBe('ApiKey realm="orders"');
    expect(error.reason).toBe('scheme');
    expect(lookups()).toBe(0);
  });

  it('X-API-Key: <key> → 401 unsupported_auth_scheme saying the header is not read', async () => {
    const { guard, lookups } = setup();
    for (const xApiKey of [KEY, [KEY], 'anything']) {
      const { problem } = await problemOf(guard.check({ authorization: undefined, xApiKey, url: URL_ }));
      expect([problem.status, problem.body.code, problem.headers['www-authenticate']]).toEqual([401, 'unsupported_auth_scheme', 'ApiKey realm="orders"']);
      expect(problem.body.detail).toBe('The X-API-Key header is not read: send the API key as `Authorization: ApiKey <key>`.');
    }
    expect(lookups()).toBe(0);
  });

  it('a bare key as the whole Authorization value is not echoed as a "scheme"', async () => {
    const { guard } = setup();
    const { problem } = await problemOf(guard.check({ authorization: KEY, url: URL_ }));
    expect(problem.body.code).toBe('unsupported_auth_scheme');
    expect(problem.body.detail).toBe('The Authorization header holds no `ApiKey` credentials: send the API key as `Authorization: ApiKey <key>`.');
  });

  it('no credentials at all (no header, empty ones) stay 401 missing_api_key', async () => {
    const { guard } = setup();
    for (const request of [{ authorization: undefined }, { authorization: null }, { authorization: '' }, { authorization: '  ' }, { authorization: '', xApiKey: '' }, { authorization: undefined, xApiKey: [] }]) {
      const { problem, error } = await problemOf(guard.check({ ...request, url: URL_ }));
      expect([problem.status, problem.body.code, problem.body.title]).toEqual([401, 'missing_api_key', 'Missing API key']);
      expect(problem.headers['www-authenticate']).toBe('ApiKey realm="orders"');
      expect(error.reason).toBe('missing');
    }
  });

  it('ApiKey credentials win over an X-API-Key header: the key in Authorization is what is checked', async () => {
    const { guard } = setup();
    const { problem } = await problemOf(guard.check({ authorization: `ApiKey ${KEY}`, xApiKey: KEY, url: URL_ }));
    // An unknown (well-formed) key: the store was asked, so the header was read.
    expect(problem.body.code).toBe('invalid_api_key');
  });

  it('no response member holds the key, whatever scheme word or header carried it (property)', () => {
    const scheme = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,40}$/).filter((s) => s.toLowerCase() !== 'apikey');
    fc.assert(
      fc.property(scheme, fc.constantFrom(' ', '  ', '\t'), fc.boolean(), (word, gap, inScheme) => {
        const authorization = inScheme ? `${word}${KEY}` : `${word}${gap}${KEY}`;
        const problem = toProblem(credentialsRefusal(authorization, KEY, 'orders'));
        expect(problem.body.code).toBe('unsupported_auth_scheme');
        expect(JSON.stringify(problem)).not.toContain(KEY.slice(-12));
      }),
    );
  });
});
