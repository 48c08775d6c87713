import { describe, expect, it } from 'vitest';
import { ConfigError, KeysetError, toProblem } from '../errors.ts';
import { createLimitPolicy } from './limit-policy.ts';

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
  ])('refuses %j with ConfigError', (options) => {
    expect(() => createLimitPolicy(options)).toThrow(ConfigError);
  });
});
