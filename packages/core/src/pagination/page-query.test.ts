import { describe, expect, it } from 'vitest';
import { ConfigError, KeysetError, toProblem } from '../errors.ts';
import { parsePageQuery } from './page-query.ts';

const q = (s: string): URLSearchParams => new URLSearchParams(s);

function refusal(query: string, options = {}): KeysetError {
  try {
    parsePageQuery(q(query), options);
  } catch (err) {
    expect(err).toBeInstanceOf(KeysetError);
    return err as KeysetError;
  }
  throw new Error(`accepted ${query}`);
}

describe('parsePageQuery', () => {
  it('defaults to cursor mode with no limit', () => {
    expect(parsePageQuery(q(''))).toEqual({ mode: 'cursor', limit: undefined, cursor: null });
    expect(parsePageQuery(q('status=paid'), { defaultMode: 'offset' })).toEqual({ mode: 'offset', limit: undefined, offset: 0 });
  });

  it('returns a frozen query', () => {
    expect(Object.isFrozen(parsePageQuery(q('limit=5&cursor=abc')))).toBe(true);
    expect(Object.isFrozen(parsePageQuery(q('offset=5')))).toBe(true);
  });

  it('reads limit, offset and cursor', () => {
    expect(parsePageQuery(q('limit=50&offset=0'))).toEqual({ mode: 'offset', limit: 50, offset: 0 });
    expect(parsePageQuery(q('offset=40'))).toEqual({ mode: 'offset', limit: undefined, offset: 40 });
    expect(parsePageQuery(q('cursor=abc&limit=1'))).toEqual({ mode: 'cursor', limit: 1, cursor: 'abc' });
    expect(parsePageQuery(q(`limit=${Number.MAX_SAFE_INTEGER}`)).limit).toBe(Number.MAX_SAFE_INTEGER);
    expect(parsePageQuery(q(`offset=${Number.MAX_SAFE_INTEGER}`))).toMatchObject({ offset: Number.MAX_SAFE_INTEGER });
  });

  it.each([
    ['0', 'zero'],
    ['-1', 'sign'],
    ['+5', 'plus sign'],
    ['1.0', 'decimal'],
    ['1.5', 'decimal'],
    ['1e3', 'exponent'],
    ['1E3', 'exponent'],
    [' 5', 'leading space'],
    ['5 ', 'trailing space'],
    ['05', 'leading zero'],
    ['0x10', 'hex'],
    ['Infinity', 'word'],
    ['NaN', 'word'],
    ['abc', 'junk'],
    ['５', 'full-width digit'],
    ['9007199254740992', 'past MAX_SAFE_INTEGER'],
    ['99999999999999999999999', 'far past MAX_SAFE_INTEGER'],
  ])('limit=%s (%s) → 400 invalid_limit', (value) => {
    const err = refusal(`limit=${encodeURIComponent(value)}`);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_limit');
    expect(err.detail).toMatch(/`limit`/);
    expect(err.extensions.parameter).toBe('limit');
  });

  it('says what the maximum is when limit is past MAX_SAFE_INTEGER', () => {
    expect(refusal('limit=9007199254740992').detail).toContain(String(Number.MAX_SAFE_INTEGER));
  });

  it.each(['-1', '+0', '1.0', '1e2', ' 0', '00', '01', 'x', '9007199254740992'])('offset=%s → 400 invalid_offset', (value) => {
    const err = refusal(`offset=${encodeURIComponent(value)}`);
    expect([err.status, err.code, err.extensions.parameter]).toEqual([400, 'invalid_offset', 'offset']);
    expect(err.detail).toMatch(/`offset`/);
  });

  it.each([
    ['limit=5&limit=5', 'invalid_limit'],
    ['limit=', 'invalid_limit'],
    ['limit', 'invalid_limit'],
    ['offset=1&offset=2', 'invalid_offset'],
    ['offset=', 'invalid_offset'],
    ['cursor=a&cursor=b', 'invalid_cursor'],
    ['cursor=', 'invalid_cursor'],
  ])('%s → 400 %s (repeated or empty)', (query, code) => {
    const err = refusal(query);
    expect([err.status, err.code]).toEqual([400, code]);
    expect(err.detail).toMatch(/at most once|must not be empty/);
  });

  it('refuses cursor and offset together', () => {
    const err = refusal('cursor=abc&offset=0');
    expect([err.status, err.code]).toEqual([400, 'conflicting_pagination']);
    expect(err.detail).toMatch(/`cursor` or `offset`/);
  });

  it('refuses a mode the endpoint does not serve, naming the parameter', () => {
    const offset = refusal('offset=0', { modes: ['cursor'] });
    expect([offset.status, offset.code, offset.extensions.parameter]).toEqual([400, 'invalid_request', 'offset']);
    expect(offset.detail).toMatch(/`offset` is not supported/);
    const cursor = refusal('cursor=x', { modes: ['offset'], defaultMode: 'offset' });
    expect([cursor.code, cursor.extensions.parameter]).toEqual(['invalid_request', 'cursor']);
    expect(parsePageQuery(q('limit=3'), { modes: ['offset'], defaultMode: 'offset' })).toEqual({ mode: 'offset', limit: 3, offset: 0 });
  });

  it('maps to an RFC 9457 problem with the parameter named', () => {
    const { status, body } = toProblem(refusal('limit=abc'));
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_limit', status: 400, parameter: 'limit' });
    expect(typeof body.detail).toBe('string');
  });

  it('rejects bad mode options at call time with ConfigError', () => {
    expect(() => parsePageQuery(q(''), { modes: [] })).toThrow(ConfigError);
    expect(() => parsePageQuery(q(''), { modes: ['offset'] })).toThrow(/defaultMode/);
    expect(() => parsePageQuery(q(''), { modes: ['pages' as 'offset'] })).toThrow(ConfigError);
  });
});
