import { describe, expect, it } from 'vitest';
import { ConfigError, KeysetError, toProblem } from '../errors.ts';
import { createLimitPolicy } from './page-query.ts';

describe('createLimitPolicy', () => {
  it('defaults to 20 / 100 / reject and is frozen', () => {
    const p = createLimitPolicy();
    expect([p.default, p.max, p.overMax]).toEqual([20, 100, 'reject']);
    expect(Object.isFrozen(p)).toBe(true);
    expect(p.resolve(undefined)).toBe(20);
    expect(p.resolve(100)).toBe(100);
    expect(p.resolve(1)).toBe(1);
  });

  it('rejects a limit over max with limit_too_large and max_limit', () => {
    const p = createLimitPolicy({ max: 50 });
    let err: unknown;
    try {
      p.resolve(51);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeysetError);
    expect(err).toMatchObject({ status: 400, code: 'limit_too_large', extensions: { max_limit: 50 } });
    expect(toProblem(err).body).toMatchObject({ code: 'limit_too_large', max_limit: 50 });
    expect((err as KeysetError).detail).toMatch(/at most 50/);
  });

  it('clamps to max under clamp', () => {
    expect(createLimitPolicy({ max: 50, overMax: 'clamp' }).resolve(10_000)).toBe(50);
  });

  it('serves any offset by default; with maxOffset, refuses a larger one with offset_too_large and max_offset', () => {
    expect(createLimitPolicy().resolveOffset(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(createLimitPolicy().maxOffset).toBeUndefined();
    const p = createLimitPolicy({ maxOffset: 10_000 });
    expect(p.maxOffset).toBe(10_000);
    expect(p.resolveOffset(0)).toBe(0);
    expect(p.resolveOffset(10_000)).toBe(10_000);
    let err: unknown;
    try {
      p.resolveOffset(10_001);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeysetError);
    expect(err).toMatchObject({ status: 400, code: 'offset_too_large', extensions: { max_offset: 10_000 } });
    expect(toProblem(err).body).toMatchObject({ status: 400, code: 'offset_too_large', title: 'Offset too large', max_offset: 10_000 });
    expect((err as KeysetError).detail).toBe('`offset` must be at most 10000, got 10001');
    // maxOffset 0: the first page only.
    expect(() => createLimitPolicy({ maxOffset: 0 }).resolveOffset(1)).toThrow(KeysetError);
  });

  it('a max below 20 lowers the implicit default', () => {
    expect(createLimitPolicy({ max: 10 }).default).toBe(10);
  });

  it.each([
    [{ max: 0 }],
    [{ max: 1.5 }],
    [{ max: Number.NaN }],
    [{ default: 0 }],
    [{ default: 101 }],
    [{ default: 2.5 }],
    [{ default: 30, max: 10 }],
    [{ overMax: 'truncate' as 'clamp' }],
    [{ maxOffset: -1 }],
    [{ maxOffset: 1.5 }],
    [{ maxOffset: Number.POSITIVE_INFINITY }],
    [{ maxOffset: '1000' as unknown as number }],
  ])('refuses %j with ConfigError', (options) => {
    expect(() => createLimitPolicy(options)).toThrow(ConfigError);
  });
});
