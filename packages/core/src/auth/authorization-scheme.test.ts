/**
 * A key sent in a form the keyring does not read (`Authorization: Bearer <key>`, `X-API-Key`,
 * unless its `schemes` list them) is told so (401 `unsupported_auth_scheme`, saying where the key goes), not "Missing API
 * key"; a request with no credentials at all still gets `missing_api_key`. Both carry the
 * ApiKey challenge, neither reaches the store, and neither echoes the key. Through the guard
 * adapters call, mapped with `toProblem` as adapters do.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rejection } from '@keyset/test-support';
import { ConfigError, ERROR_CATALOGUE, toProblem, type AuthenticationError } from '../errors.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { credentialsRefusal, type KeyScheme } from './authorization-header.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { generateKey } from '../keys/key-format.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

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
  const error = await rejection(promise);
  return { problem: toProblem(error), error: error as AuthenticationError };
}

describe('unsupported_auth_scheme in the catalogue', () => {
  it('is a 401 of its own, titled for what happened', () => {
    expect(ERROR_CATALOGUE.unsupported_auth_scheme).toEqual({ status: 401, title: 'Unsupported authentication scheme' });
    expect(ERROR_CATALOGUE.missing_api_key.title).toBe('Missing API key');
  });
});

describe('createApiKeyGuard: credentials in a form keyset does not read', () => {
  it.each([
    ['Bearer', `Bearer ${KEY}`, 'the `Bearer` scheme'],
    ['Basic', `Basic ${btoa(`${KEY}:`)}`, 'the `Basic` scheme'],
    ['Token', `Token token=${KEY}`, 'the `Token` scheme'],
    // Known schemes are named in their usual spelling; any other word is not echoed.
    ['bearer', `bearer   ${KEY}  `, 'the `Bearer` scheme'],
    ['Api-Key', `Api-Key ${KEY}`, 'an unsupported scheme'],
    ['ApiKeys', `ApiKeys ${KEY}`, 'an unsupported scheme'],
    ['OiLzh74MVrNeFH1NUbIt', 'OiLzh74MVrNeFH1NUbIt', 'an unsupported scheme'],
  ])('Authorization: %s <key> → 401 unsupported_auth_scheme naming a known scheme (only) and the ApiKey form', async (_scheme, authorization, what) => {
    const { guard, lookups } = setup();
    const { problem, error } = await problemOf(guard.check({ authorization, url: URL_ }));
    expect(problem.status).toBe(401);
    expect(problem.body).toMatchObject({ code: 'unsupported_auth_scheme', title: 'Unsupported authentication scheme' });
    expect(problem.body.detail).toBe(`The Authorization header uses ${what}: send the API key as \`Authorization: ApiKey <key>\`.`);
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
    expect(problem.body.detail).toBe('The Authorization header uses an unsupported scheme: send the API key as `Authorization: ApiKey <key>`.');
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

  it('the scheme word of any 8 or more characters is named only when it is a known scheme (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Za-z]{8,40}$/), fc.constantFrom('', ' x'), (word, rest) => {
        const detail = toProblem(credentialsRefusal(`${word}${rest}`, undefined, 'orders')).body.detail;
        expect(detail).not.toContain(word.slice(0, 8));
        expect(detail).not.toContain('…');
      }),
    );
  });
});

/** A keyring reading keys from `schemes`, and a key it issued. */
async function withSchemes(schemes: readonly KeyScheme[] | undefined) {
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, ...(schemes === undefined ? {} : { schemes }) });
  const { key } = await createKeyAdmin(keyring).issue({ name: 'k', scopes: [] });
  return { guard: createApiKeyGuard({ keyring, realm: 'orders', refusedCredentials: false }), key };
}

describe('credential schemes: ApiKey by default, Bearer and X-API-Key when the keyring lists them', () => {
  const forms = (key: string) => ({
    ApiKey: { authorization: `ApiKey ${key}` },
    Bearer: { authorization: `Bearer ${key}` },
    'X-API-Key': { authorization: undefined, xApiKey: key },
  });

  it.each<[readonly KeyScheme[] | undefined, string]>([
    [undefined, 'ApiKey realm="orders"'],
    [['ApiKey'], 'ApiKey realm="orders"'],
    [['Bearer'], 'Bearer realm="orders"'],
    [['X-API-Key'], 'X-API-Key realm="orders"'],
    [['ApiKey', 'Bearer'], 'ApiKey realm="orders", Bearer realm="orders"'],
    [['X-API-Key', 'Bearer', 'ApiKey'], 'ApiKey realm="orders", Bearer realm="orders", X-API-Key realm="orders"'],
  ])('schemes %j: each listed form authenticates, each other one is 401 unsupported_auth_scheme; challenges %s', async (schemes, challenge) => {
    const { guard, key } = await withSchemes(schemes);
    const accepted = schemes ?? ['ApiKey'];
    for (const [scheme, request] of Object.entries(forms(key))) {
      if (accepted.includes(scheme as KeyScheme)) {
        await expect(guard.check({ ...request, url: URL_ }), scheme).resolves.toMatchObject({ key: { name: 'k' } });
      } else {
        const { problem } = await problemOf(guard.check({ ...request, url: URL_ }));
        expect([problem.status, problem.body.code, problem.headers['www-authenticate']], scheme).toEqual([401, 'unsupported_auth_scheme', challenge]);
        for (const form of accepted) expect(problem.body.detail).toContain(form === 'X-API-Key' ? '`X-API-Key: <key>`' : `\`Authorization: ${form} <key>\``);
        expect(JSON.stringify(problem)).not.toContain(key.slice(-12));
      }
    }
    // A wrong key and no key carry the same challenges.
    for (const request of [{ authorization: undefined }, { authorization: `${accepted[0] === 'X-API-Key' ? 'ApiKey' : accepted[0]} ${generateKey(PREFIX)}` }]) {
      const { problem } = await problemOf(guard.check({ ...request, url: URL_ }));
      expect(problem.headers['www-authenticate']).toBe(challenge);
    }
  });

  it('keys in the query string stay refused whatever the schemes', async () => {
    const { guard, key } = await withSchemes(['ApiKey', 'Bearer', 'X-API-Key']);
    for (const url of [`${URL_}?api_key=${key}`, `${URL_}?q=${key}`, `${URL_}?access_token=x`]) {
      const { problem } = await problemOf(guard.check({ authorization: `Bearer ${key}`, url }));
      expect([problem.status, problem.body.code]).toEqual([400, 'api_key_in_query']);
    }
  });

  it('two credentials in one request are a 400, whichever places hold them', async () => {
    const { guard, key } = await withSchemes(['ApiKey', 'Bearer', 'X-API-Key']);
    for (const request of [
      { authorization: `ApiKey ${key}`, xApiKey: key },
      { authorization: `Bearer ${key}`, xApiKey: key },
      { authorization: 'Basic eDp5', xApiKey: key },
      { authorization: undefined, xApiKey: [key, key] },
      { authorization: undefined, xApiKey: `${key}, ${key}` },
      { authorization: [`ApiKey ${key}`, `Bearer ${key}`] },
      { authorization: `Bearer ${key}, ApiKey ${key}` },
    ]) {
      const { problem } = await problemOf(guard.check({ ...request, url: URL_ }));
      expect([problem.status, problem.body.code, problem.body.field], JSON.stringify(request)).toEqual([400, 'invalid_request', 'authorization']);
    }
    // Not read, the X-API-Key header is no second credential (as before).
    const defaults = await withSchemes(undefined);
    await expect(defaults.guard.check({ authorization: `ApiKey ${defaults.key}`, xApiKey: 'anything', url: URL_ })).resolves.toMatchObject({ key: { name: 'k' } });
  });

  it('refused keys in every accepted place count against the refused-credentials budget', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, schemes: ['ApiKey', 'Bearer', 'X-API-Key'] });
    const guard = createApiKeyGuard({ keyring, refusedCredentials: { limit: 3, windowSeconds: 3600 } });
    const wrong = () => generateKey(PREFIX);
    const requests = [{ authorization: `ApiKey ${wrong()}` }, { authorization: `Bearer ${wrong()}` }, { authorization: undefined, xApiKey: wrong() }, { authorization: `Bearer ${wrong()}` }];
    const codes: unknown[] = [];
    for (const request of requests) codes.push((await problemOf(guard.check({ ...request, url: URL_, remoteAddress: '192.0.2.7' }))).problem.body.code);
    expect(codes).toEqual(['invalid_api_key', 'invalid_api_key', 'invalid_api_key', 'rate_limited']);
  });

  it('refuses a schemes option that lists nothing, an unknown form or one twice', () => {
    for (const schemes of [[], ['apikey'], ['Basic'], ['ApiKey', 'ApiKey'], 'Bearer'] as unknown[]) {
      expect(() => createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, schemes: schemes as KeyScheme[] }), JSON.stringify(schemes)).toThrow(ConfigError);
    }
  });
});
