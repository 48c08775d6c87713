/**
 * The edges of credential reading: which scheme lists are accepted and the exact refusal,
 * trailing whitespace trimmed after the key (spaces and tabs, and nothing else), the
 * `X-API-Key` header's blank values ignored and its value trimmed, two credentials
 * refused, and the detail of each refusal naming the accepted forms.
 */
import { describe, expect, it } from 'vitest';
import { AuthenticationError, ConfigError, KeysetError } from '../errors.ts';
import { API_KEY_ONLY, credentialsRefusal, readApiKeyHeader, readCredentials, resolveSchemes } from './authorization-header.ts';

const key = 'acme_live_0123456789abcdefghijABCDEFGHIJkl000000';
const SCHEMES_MESSAGE = "schemes must list one or more of 'ApiKey', 'Bearer', 'X-API-Key' (spelt so), each once, got ";
const ALL = resolveSchemes(['ApiKey', 'Bearer', 'X-API-Key']);

function refusal(read: () => unknown): KeysetError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(KeysetError);
    return error as KeysetError;
  }
  throw new Error('accepted');
}

describe('resolveSchemes edges', () => {
  it('is ApiKey alone by default, and lists the accepted schemes in a fixed order', () => {
    expect(resolveSchemes()).toEqual({ apiKey: true, bearer: false, xApiKey: false, list: ['ApiKey'] });
    expect(resolveSchemes(['X-API-Key', 'Bearer'])).toEqual({ apiKey: false, bearer: true, xApiKey: true, list: ['Bearer', 'X-API-Key'] });
    expect(ALL.list).toEqual(['ApiKey', 'Bearer', 'X-API-Key']);
  });

  it.each([[[]], [['ApiKey', 'ApiKey']], [['apikey']], [['ApiKey', 'Basic']], ['ApiKey']])('refuses %j with the list it got', (schemes) => {
    expect(() => resolveSchemes(schemes as never)).toThrow(ConfigError);
    expect(() => resolveSchemes(schemes as never)).toThrow(SCHEMES_MESSAGE + JSON.stringify(schemes));
  });
});

describe('schemeText edges', () => {
  it('drops trailing spaces and tabs after the key, and only those', () => {
    expect(readApiKeyHeader(`ApiKey ${key}\t`)).toEqual({ kind: 'key', text: key });
    expect(readApiKeyHeader(`ApiKey ${key} `)).toEqual({ kind: 'key', text: key });
    expect(readApiKeyHeader(`ApiKey ${key}\t \t`)).toEqual({ kind: 'key', text: key });
    expect(readApiKeyHeader(`ApiKey ${key}\n`)).toEqual({ kind: 'key', text: `${key}\n` });
    expect(readApiKeyHeader(`ApiKey  a `)).toEqual({ kind: 'key', text: 'a' });
    expect(readApiKeyHeader(`ApiKey ${key} x\t`)).toEqual({ kind: 'key', text: `${key} x` });
  });

  it('reads no ApiKey scheme when another token character follows it', () => {
    expect(readApiKeyHeader(`ApiKeys ${key}`)).toEqual({ kind: 'missing' });
    expect(readApiKeyHeader(`ApiKey~ ${key}`)).toEqual({ kind: 'missing' });
    expect(readApiKeyHeader(`ApiKey_${key}`)).toEqual({ kind: 'missing' });
  });

  it('keeps a text with no space after the scheme whole, trailing whitespace included', () => {
    expect(readApiKeyHeader(`ApiKey\t${key} `)).toEqual({ kind: 'key', text: `\t${key} ` });
  });

  it('reads a scheme followed by a character past ASCII as that scheme', () => {
    expect(readApiKeyHeader(`ApiKey\u0080${key}`)).toEqual({ kind: 'key', text: `\u0080${key}` });
    expect(readApiKeyHeader(`ApiKeyé${key}`)).toEqual({ kind: 'key', text: `é${key}` });
  });
});

describe('readCredentials edges', () => {
  it('reads X-API-Key trimmed, and ignores blank values in a list', () => {
    expect(readCredentials(undefined, `  ${key}\t`, ALL, 'api')).toBe(key);
    expect(readCredentials(undefined, ['', '  ', key], ALL, 'api')).toBe(key);
    expect(readCredentials('', [' ', ` ${key} `], ALL, 'api')).toBe(key);
    expect(readCredentials('  ', key, ALL, 'api')).toBe(key);
  });

  it('falls back to Authorization when every X-API-Key value is blank or not a string', () => {
    expect(readCredentials(`Bearer ${key}`, ['', ' \t'], ALL, 'api')).toBe(key);
    expect(readCredentials(`ApiKey ${key}`, [42 as never, ' '], ALL, 'api')).toBe(key);
    expect(readCredentials(undefined, [42 as never, null as never, ` ${key}`], ALL, 'api')).toBe(key);
  });

  it('refuses two X-API-Key values, or X-API-Key with an Authorization header', () => {
    const detail = 'The request carries more than one set of credentials: send one API key, in one place.';
    for (const read of [
      () => readCredentials(undefined, [key, key], ALL, 'api'),
      () => readCredentials(undefined, `${key}, ${key}`, ALL, 'api'),
      () => readCredentials(`ApiKey ${key}`, key, ALL, 'api'),
      () => readCredentials('Basic x', key, ALL, 'api'),
    ]) {
      const error = refusal(read);
      expect(error.code).toBe('invalid_request');
      expect(error.detail).toBe(detail);
    }
  });
});

describe('credentialsRefusal edges', () => {
  it('names every accepted form, joined by "or", in each refusal', () => {
    const forms = '`Authorization: ApiKey <key>` or `Authorization: Bearer <key>` or `X-API-Key: <key>`';
    const missing = credentialsRefusal(undefined, undefined, 'api', ALL);
    expect(missing).toBeInstanceOf(AuthenticationError);
    expect(missing.code).toBe('missing_api_key');
    expect(missing.detail).toBe(`Send the API key as ${forms}.`);
    expect(credentialsRefusal('Basic x', undefined, 'api', ALL).detail).toBe(`The Authorization header uses the \`Basic\` scheme: send the API key as ${forms}.`);
  });

  it('keeps the catalogue detail for ApiKey alone, and names the form for Bearer alone', () => {
    const catalogue = credentialsRefusal(undefined, undefined, 'api', API_KEY_ONLY);
    expect(catalogue.detail).not.toContain('Send the API key as');
    expect(credentialsRefusal(undefined, undefined, 'api', resolveSchemes(['Bearer'])).detail).toBe('Send the API key as `Authorization: Bearer <key>`.');
    expect(credentialsRefusal(undefined, undefined, 'api', resolveSchemes(['ApiKey', 'Bearer'])).detail).toBe(
      'Send the API key as `Authorization: ApiKey <key>` or `Authorization: Bearer <key>`.',
    );
  });

  it('treats an X-API-Key list of blanks as no header', () => {
    expect(credentialsRefusal(undefined, ['', '  '], 'api', API_KEY_ONLY).code).toBe('missing_api_key');
    expect(credentialsRefusal(undefined, [' '], 'api', API_KEY_ONLY).code).toBe('missing_api_key');
    expect(credentialsRefusal(undefined, ' ', 'api', API_KEY_ONLY).code).toBe('missing_api_key');
    expect(credentialsRefusal(undefined, [key], 'api', API_KEY_ONLY).code).toBe('unsupported_auth_scheme');
  });
});
