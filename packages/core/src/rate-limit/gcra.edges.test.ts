/**
 * The exact edges of the GCRA module: which policies are refused and with which message
 * (each bound and the value just past it), the constants a policy gives, which costs and
 * pairs a decision refuses, and the decisions themselves to the microsecond (admitted when
 * the TAT lands exactly on `now + B`, refused one microsecond later; `remaining`,
 * `resetSeconds`, `retryAfterSeconds` rounded up, never negative). The property tests
 * check the algorithm's promises over random traffic; the mutation run over `gcra.ts`
 * (docs/security.md, "Mutation testing") found these lines unpinned.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { evaluateGcra, evaluateOne, gcraParameters, prepareGcra, rateLimitPolicyProblem } from './gcra.ts';

const YEAR = 366 * 24 * 3600;

describe('rateLimitPolicyProblem', () => {
  it('accepts each bound', () => {
    for (const policy of [
      { limit: 1, windowSeconds: 1 },
      { limit: 1, windowSeconds: YEAR },
      { limit: 1_000_000, windowSeconds: 1 },
      { limit: 10, windowSeconds: 60, burst: 1 },
      { limit: 10, windowSeconds: 60, name: 'a' },
      { limit: 10, windowSeconds: 60, name: 'A-z_0.9'.padEnd(64, 'x') },
      // emission 1e9 µs × burst 1e6 = 1e15 µs: the largest burst allowance.
      { limit: 1, windowSeconds: 1000, burst: 1_000_000 },
    ]) {
      expect(rateLimitPolicyProblem(policy), JSON.stringify(policy)).toBeUndefined();
    }
  });

  it('refuses the value just past each bound, saying which', () => {
    expect(rateLimitPolicyProblem(null)).toBe('a policy must be an object { limit, windowSeconds }');
    expect(rateLimitPolicyProblem('10/min')).toBe('a policy must be an object { limit, windowSeconds }');
    expect(rateLimitPolicyProblem({ limit: 0, windowSeconds: 60 })).toBe('limit must be a positive integer, got 0');
    expect(rateLimitPolicyProblem({ limit: 1.5, windowSeconds: 60 })).toBe('limit must be a positive integer, got 1.5');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 0 })).toBe(`windowSeconds must be a whole number of seconds from 1 to ${YEAR}, got 0`);
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: YEAR + 1 })).toBe(`windowSeconds must be a whole number of seconds from 1 to ${YEAR}, got ${YEAR + 1}`);
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 0.5 })).toBe(`windowSeconds must be a whole number of seconds from 1 to ${YEAR}, got 0.5`);
    expect(rateLimitPolicyProblem({ limit: 1_000_001, windowSeconds: 1 })).toBe('limit 1000001 per 1s is finer than one microsecond per request');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, burst: 0 })).toBe('burst must be a positive integer, got 0');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, burst: 2.5 })).toBe('burst must be a positive integer, got 2.5');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, name: '' })).toBe('name must be 1-64 characters of A-Z a-z 0-9 _ . -, got ""');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, name: 'x'.repeat(65) })).toBe(`name must be 1-64 characters of A-Z a-z 0-9 _ . -, got "${'x'.repeat(65)}"`);
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, name: 'a b' })).toBe('name must be 1-64 characters of A-Z a-z 0-9 _ . -, got "a b"');
    expect(rateLimitPolicyProblem({ limit: 10, windowSeconds: 60, name: 7 })).toBe('name must be 1-64 characters of A-Z a-z 0-9 _ . -, got 7');
    expect(rateLimitPolicyProblem({ limit: 1, windowSeconds: 1000, burst: 1_000_001 })).toBe('burst · windowSeconds / limit is too large (more than 31 years)');
    // Without a burst, the limit is the burst: a year's window at one request allows no more than 1e15 µs.
    expect(rateLimitPolicyProblem({ limit: 2, windowSeconds: YEAR })).toBeUndefined();
  });
});

describe('gcraParameters', () => {
  it('gives T = ceil(window / limit) in µs, B = burst · T, the burst defaulting to the limit and the name to "default"', () => {
    const policy = { limit: 3, windowSeconds: 1 };
    expect(gcraParameters(policy)).toEqual({ policy, name: 'default', emissionMicros: 333_334, burstMicros: 1_000_002, burst: 3, observe: false });
    const named = { limit: 10, windowSeconds: 60, burst: 4, name: 'search' };
    expect(gcraParameters(named)).toEqual({ policy: named, name: 'search', emissionMicros: 6_000_000, burstMicros: 24_000_000, burst: 4, observe: false });
    expect(Object.isFrozen(gcraParameters(named))).toBe(true);
  });

  it('throws ConfigError with the problem', () => {
    expect(() => gcraParameters({ limit: 0, windowSeconds: 60 })).toThrow(new ConfigError('Invalid rate-limit policy: limit must be a positive integer, got 0'));
  });
});

describe('prepareGcra', () => {
  const policy = { limit: 10, windowSeconds: 60, burst: 3 };

  it('refuses no pairs, a cost below 0 or not whole, a cost over the smallest burst, a key that is not a string', () => {
    expect(() => prepareGcra([], 1)).toThrow(new ConfigError('A decision needs at least one (key, policy) pair'));
    expect(() => prepareGcra(undefined as never, 1)).toThrow(new ConfigError('A decision needs at least one (key, policy) pair'));
    expect(() => prepareGcra([{ key: 'k', policy }], -1)).toThrow(new ConfigError('cost must be a non-negative integer, got -1'));
    expect(() => prepareGcra([{ key: 'k', policy }], 0.5)).toThrow(new ConfigError('cost must be a non-negative integer, got 0.5'));
    expect(() => prepareGcra([{ key: 'k', policy }], 4)).toThrow(new ConfigError('cost 4 exceeds the burst 3 of policy "default": it could never be admitted'));
    expect(() => prepareGcra([{ key: 7 as never, policy }], 1)).toThrow(new ConfigError('A rate-limit key must be a string, got number'));
  });

  it('accepts a cost of 0 (a peek) and a cost equal to the burst', () => {
    expect(prepareGcra([{ key: 'k', policy }], 0)).toHaveLength(1);
    expect(prepareGcra([{ key: 'k', policy }], 3)[0]).toMatchObject({ burst: 3, emissionMicros: 6_000_000 });
  });

  it('refuses the same (key, policy name) twice, and only that', () => {
    const other = { ...policy, name: 'other' };
    expect(() => prepareGcra([{ key: 'k', policy }, { key: 'k', policy: { limit: 5, windowSeconds: 1 } }], 1)).toThrow(
      new ConfigError('A decision names the pair (key, policy "default") twice'),
    );
    expect(prepareGcra([{ key: 'k', policy }, { key: 'k', policy: other }, { key: 'j', policy }], 1).map((p) => p.name)).toEqual(['default', 'other', 'default']);
  });
});

describe('evaluateOne and evaluateGcra, to the microsecond', () => {
  // T = 1 s, B = 3 s.
  const p = gcraParameters({ limit: 3, windowSeconds: 3 });
  const now = 1_000_000_000_000;

  it('a fresh key: admitted, 2 more left, reset once this request has drained', () => {
    const expected = { allowed: true, policy: p.policy, remaining: 2, resetSeconds: 1, retryAfterSeconds: 0 };
    expect(evaluateOne(p, undefined, now, 1)).toEqual(expected);
    // A TAT in the past counts from now, as does one exactly at now.
    expect(evaluateOne(p, now - 5_000_000, now, 1)).toEqual(expected);
    expect(evaluateOne(p, now, now, 1)).toEqual(expected);
    expect(evaluateGcra([{ parameters: p, tat: undefined }], now, 1)).toEqual({ allowed: true, observedAllowed: true, decisions: [expected], newTats: [now + 1_000_000] });
    expect(evaluateGcra([{ parameters: p, tat: now - 1 }], now, 1).newTats).toEqual([now + 1_000_000]);
  });

  it('admitted when the new TAT lands exactly on now + B; refused one microsecond later, with the wait rounded up', () => {
    const last = now + 2_000_000;
    expect(evaluateOne(p, last, now, 1)).toEqual({ allowed: true, policy: p.policy, remaining: 0, resetSeconds: 3, retryAfterSeconds: 0 });
    expect(evaluateGcra([{ parameters: p, tat: last }], now, 1)).toMatchObject({ allowed: true, newTats: [now + 3_000_000] });
    const over = last + 1;
    const refused = { allowed: false, policy: p.policy, remaining: 0, resetSeconds: 3, retryAfterSeconds: 1 };
    expect(evaluateOne(p, over, now, 1)).toEqual(refused);
    expect(evaluateGcra([{ parameters: p, tat: over }], now, 1)).toEqual({ allowed: false, observedAllowed: true, decisions: [refused], newTats: [over + 1_000_000] });
  });

  it('a cost of several intervals, and a peek (cost 0)', () => {
    expect(evaluateOne(p, undefined, now, 3)).toEqual({ allowed: true, policy: p.policy, remaining: 0, resetSeconds: 3, retryAfterSeconds: 0 });
    expect(evaluateOne(p, now + 1_500_000, now, 2)).toEqual({ allowed: false, policy: p.policy, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect(evaluateOne(p, now + 1_500_000, now, 0)).toEqual({ allowed: true, policy: p.policy, remaining: 1, resetSeconds: 2, retryAfterSeconds: 0 });
    expect(evaluateOne(p, undefined, now, 0)).toEqual({ allowed: true, policy: p.policy, remaining: 3, resetSeconds: 0, retryAfterSeconds: 0 });
  });

  it('several pairs: all or nothing; a refusal gives a wait only on the pairs that refused, and stores nothing new on any', () => {
    const q = gcraParameters({ limit: 10, windowSeconds: 10, name: 'wide' });
    const both = evaluateGcra([{ parameters: p, tat: undefined }, { parameters: q, tat: undefined }], now, 1);
    expect(both).toEqual({
      allowed: true,
      observedAllowed: true,
      decisions: [
        { allowed: true, policy: p.policy, remaining: 2, resetSeconds: 1, retryAfterSeconds: 0 },
        { allowed: true, policy: q.policy, remaining: 9, resetSeconds: 1, retryAfterSeconds: 0 },
      ],
      newTats: [now + 1_000_000, now + 1_000_000],
    });
    const full = now + 2_500_000;
    const refused = evaluateGcra([{ parameters: p, tat: full }, { parameters: q, tat: undefined }], now, 1);
    expect(refused.allowed).toBe(false);
    expect(refused.decisions).toEqual([
      { allowed: false, policy: p.policy, remaining: 0, resetSeconds: 3, retryAfterSeconds: 1 },
      { allowed: false, policy: q.policy, remaining: 0, resetSeconds: 0, retryAfterSeconds: 0 },
    ]);
    // The same whichever pair comes first.
    expect(evaluateGcra([{ parameters: q, tat: undefined }, { parameters: p, tat: full }], now, 1).decisions.map((d) => d.retryAfterSeconds)).toEqual([0, 1]);
  });

  it('rounds waits up to whole seconds: 1 µs is 1 s, 1 s + 1 µs is 2 s', () => {
    expect(evaluateOne(p, now + 2_000_001, now, 1).retryAfterSeconds).toBe(1);
    expect(evaluateOne(p, now + 3_000_001, now, 1).retryAfterSeconds).toBe(2);
    expect(evaluateOne(p, now + 3_000_001, now, 1).resetSeconds).toBe(4);
    expect(evaluateOne(p, now + 1, now, 1)).toMatchObject({ allowed: true, resetSeconds: 2, remaining: 1 });
  });
});
