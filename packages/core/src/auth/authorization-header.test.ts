import { describe, expect, it } from 'vitest';
import { readApiKeyHeader } from './authorization-header.ts';

const key = 'acme_live_0123456789abcdefghijABCDEFGHIJkl000000';

describe('readApiKeyHeader', () => {
  it.each([undefined, null, '', '   ', `Bearer ${key}`, `Basic ${key}`, 'Bearer', `ApiKeys ${key}`, `Api-Key ${key}`])(
    'treats %j as no ApiKey credentials',
    (value) => expect(readApiKeyHeader(value)).toEqual({ kind: 'missing' }),
  );

  it.each(['ApiKey', 'apikey', 'APIKEY', 'aPiKeY'])('matches the scheme %s case-insensitively (RFC 9110 §11.1)', (scheme) => {
    expect(readApiKeyHeader(`${scheme} ${key}`)).toEqual({ kind: 'key', text: key });
  });

  it('accepts several spaces after the scheme and trailing whitespace', () => {
    expect(readApiKeyHeader(`ApiKey    ${key}`)).toEqual({ kind: 'key', text: key });
    expect(readApiKeyHeader(`ApiKey ${key} \t `)).toEqual({ kind: 'key', text: key });
    expect(readApiKeyHeader(`  ApiKey ${key}`)).toEqual({ kind: 'key', text: key });
  });

  it('hands anything else after the ApiKey scheme to strict parsing (which calls it malformed)', () => {
    expect(readApiKeyHeader('ApiKey')).toEqual({ kind: 'key', text: '' });
    expect(readApiKeyHeader('ApiKey ')).toEqual({ kind: 'key', text: '' });
    expect(readApiKeyHeader(`ApiKey\t${key}`)).toEqual({ kind: 'key', text: `\t${key}` });
    expect(readApiKeyHeader(`ApiKey:${key}`)).toEqual({ kind: 'key', text: `:${key}` });
    expect(readApiKeyHeader(`ApiKey ${key} extra`)).toEqual({ kind: 'key', text: `${key} extra` });
    expect(readApiKeyHeader(`ApiKey ${key}, Bearer x`)).toEqual({ kind: 'key', text: `${key}, Bearer x` });
  });
});

describe('readApiKeyHeader on hostile input', () => {
  it('stays linear on a long run of inner whitespace (no regex backtracking)', () => {
    // Ten times the whitespace a quadratic trim took ~1.9 s over at 64,000 characters: a
    // quadratic one would take minutes (about 100 times longer), a linear one takes
    // milliseconds. The budget leaves a loaded machine a thousandfold margin and still
    // fails the quadratic trim by far.
    const value = `ApiKey a${' \t'.repeat(320_000)}b`;
    const started = performance.now();
    expect(readApiKeyHeader(value)).toEqual({ kind: 'key', text: value.slice(7) });
    expect(readApiKeyHeader(`ApiKey ${key}${' '.repeat(640_000)}`)).toEqual({ kind: 'key', text: key });
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
