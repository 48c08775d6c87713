/**
 * The limiter's rate limits on their own: which policies a request is decided under (the
 * key's own, else the default; its owner's as `owner.<name>`, in the owner's partition),
 * one all-or-nothing decision for both, the headers the decisions give, and the 429.
 * Decided on a real memory store through a store decider.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../errors.ts';
import { limitRequest, type LimitRequest } from './limit-request.ts';
import { createRateLimits, policiesProblem, rateLimitedError } from './rate-limits.ts';
import { createStoreDecider } from './store-decider.ts';
import type { RateLimitCheckOptions, RateLimitDecision, RateLimitLogger, RateLimitPolicy } from './types.ts';

const DEFAULT: RateLimitPolicy = Object.freeze({ limit: 100, windowSeconds: 60 });

function setup(defaults: readonly RateLimitPolicy[] = [DEFAULT]) {
  let now = 1_700_000_000_000;
  const clock = (): number => now;
  const lines: { details: Record<string, unknown>; message: string }[] = [];
  const logger: RateLimitLogger = { warn: (details, message) => void lines.push({ details, message }) };
  const stores = createStoreDecider({ store: undefined, onStoreError: 'closed', timeoutMs: 1000, retryIntervalMs: 1000, clock, logger });
  const limits = createRateLimits({ defaults, formats: { draft11: true, draft7: false, legacy: false }, clock, logger });
  // As the limiter asks: the pairs rate-limits names, decided by the store decider.
  const ask = (r: LimitRequest): RateLimitDecision[] | Promise<RateLimitDecision[]> => stores.decideAll(limits.pairsOf(r));
  return { limits: { ...limits, ask }, lines, advance: (ms: number) => void (now += ms) };
}

const request = (key: string, policies: LimitRequest['policies'], options?: RateLimitCheckOptions): LimitRequest => limitRequest(key, policies, options);

async function ask(limits: ReturnType<typeof setup>['limits'], r: LimitRequest): Promise<RateLimitDecision[]> {
  return await limits.ask(r);
}

describe('createRateLimits: which policies decide a request', () => {
  it("uses the key's own policies, and the default for a key without any", () => {
    const { limits } = setup();
    const own = { limit: 3, windowSeconds: 1 };
    expect(limits.pairsOf(request('key_a', own))).toEqual([{ key: 'key_a', policy: own }]);
    expect(limits.pairsOf(request('key_a', null))).toEqual([{ key: 'key_a', policy: DEFAULT }]);
    expect(limits.pairsOf(request('key_a', undefined))).toEqual([{ key: 'key_a', policy: DEFAULT }]);
  });

  it("falls back to the default for a key whose own policies are invalid, and logs that once per policy object, never the key's text", () => {
    const { limits, lines } = setup();
    const broken = [{ limit: 0, windowSeconds: 60 }];
    for (let i = 0; i < 3; i++) expect(limits.pairsOf(request('key_a', broken))).toEqual([{ key: 'key_a', policy: DEFAULT }]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ details: { key: 'key_a' }, message: 'ignoring an invalid per-key rate-limit policy; using the default policy' });
    const twins = [
      { limit: 1, windowSeconds: 60 },
      { limit: 2, windowSeconds: 60 },
    ];
    expect(limits.pairsOf(request('key_b', twins))).toEqual([{ key: 'key_b', policy: DEFAULT }]);
    expect(lines[1]?.details).toMatchObject({ problem: 'two policies are named "default"; give each its own name' });
  });

  it("decides a key with an owner in the owner's partition, with the owner's limits after its own, named owner.<name>", () => {
    const { limits } = setup();
    const own = { limit: 10, windowSeconds: 1, name: 'second' };
    const owner = { id: 'cus_1', rateLimits: [{ limit: 1000, windowSeconds: 3600 }, { limit: 50, windowSeconds: 1, name: 'burst' }], quota: null };
    expect(limits.pairsOf(request('key_a', own, { owner }))).toEqual([
      { key: 'key_a', policy: own, partition: 'owner:cus_1' },
      { key: 'owner:cus_1', policy: { limit: 1000, windowSeconds: 3600, name: 'owner.default' } },
      { key: 'owner:cus_1', policy: { limit: 50, windowSeconds: 1, name: 'owner.burst' } },
    ]);
    // An owner without limits still holds its keys' pairs in its partition.
    expect(limits.pairsOf(request('key_a', null, { owner: { id: 'cus_2', rateLimits: null } }))).toEqual([
      { key: 'key_a', policy: DEFAULT, partition: 'owner:cus_2' },
    ]);
  });

  it("ignores an owner's invalid limits (logged), and its keys' own limits still apply", () => {
    const { limits, lines } = setup();
    const owner = Object.freeze({ id: 'cus_1', rateLimits: Object.freeze([Object.freeze({ limit: -1, windowSeconds: 60 })]), quota: null });
    for (let i = 0; i < 2; i++) expect(limits.pairsOf(request('key_a', null, { owner }))).toEqual([{ key: 'key_a', policy: DEFAULT, partition: 'owner:cus_1' }]);
    expect(lines.map((l) => l.message)).toEqual(["ignoring an owner's invalid rate-limit policies; its keys' own limits still apply"]);
    expect(lines[0]?.details).toMatchObject({ owner: 'cus_1' });
  });
});

describe('createRateLimits: deciding and reporting', () => {
  it("refuses every key of an owner once the owner's shared limit is spent, while each key's own limit has room", async () => {
    const { limits } = setup();
    const owner = { id: 'cus_1', rateLimits: [{ limit: 3, windowSeconds: 60, name: 'shared' }], quota: null };
    const allowed: boolean[] = [];
    for (const key of ['key_a', 'key_b', 'key_a', 'key_b']) {
      const decisions = await ask(limits, request(key, { limit: 10, windowSeconds: 60 }, { owner }));
      allowed.push(decisions.every((d) => d.allowed));
    }
    expect(allowed).toEqual([true, true, true, false]);
    // A key of another owner is not held back.
    const other = await ask(limits, request('key_c', { limit: 10, windowSeconds: 60 }, { owner: { ...owner, id: 'cus_2' } }));
    expect(other.every((d) => d.allowed)).toBe(true);
  });

  it('reports the decision closest to exhaustion, with RateLimit headers for every policy', async () => {
    const { limits } = setup();
    const policies = [
      { limit: 100, windowSeconds: 60, name: 'minute' },
      { limit: 2, windowSeconds: 60, name: 'tight' },
    ];
    const { decision, decisions, headers } = limits.decided(await ask(limits, request('key_a', policies)));
    expect(decisions).toHaveLength(2);
    expect(decision.policy.name).toBe('tight');
    expect(decision.remaining).toBe(1);
    expect(headers['ratelimit-policy']).toBe('"minute";q=100;w=60, "tight";q=2;w=60');
    expect(headers['ratelimit']).toBe('"minute";r=99;t=1, "tight";r=1;t=30');
  });

  it('sends no counts when the store failed open: no made-up numbers', () => {
    const { limits } = setup();
    const open: RateLimitDecision = { allowed: true, policy: DEFAULT, remaining: 100, resetSeconds: 0, retryAfterSeconds: 0, degraded: 'open' };
    expect(limits.decided([open]).headers).toEqual({});
  });

  it('builds the 429 with the headers and the Retry-After they carry', () => {
    const problem = toProblem(rateLimitedError({ ratelimit: '"default";r=0;t=7', 'retry-after': '7' }));
    expect(problem.status).toBe(429);
    expect(problem.body).toMatchObject({ code: 'rate_limited', retry_after: 7, detail: 'Rate limit exceeded; retry in 7 s.' });
    expect(problem.headers['retry-after']).toBe('7');
  });
});

describe('policiesProblem', () => {
  const policy = fc.record({ limit: fc.integer({ min: 1, max: 1000 }), windowSeconds: fc.integer({ min: 1, max: 86_400 }) });

  it('accepts any list of valid policies with distinct names (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => /^[a-z][a-z0-9_-]*$/.test(s)), { minLength: 1, maxLength: 5 }), fc.array(policy, { minLength: 5, maxLength: 5 }), (names, bodies) => {
        const list = names.map((name, i) => ({ ...bodies[i]!, name }));
        expect(policiesProblem(list)).toBeUndefined();
      }),
    );
  });

  it('names what is wrong: no policy, a bad one by its index, or two under one name', () => {
    expect(policiesProblem([])).toBe('give at least one policy');
    expect(policiesProblem([{ limit: 5, windowSeconds: 60, name: 'a' }, { limit: 5, windowSeconds: 0, name: 'b' }])).toMatch(/^policy 1: /);
    expect(policiesProblem([{ limit: 5, windowSeconds: 60, name: 'a' }, { limit: 9, windowSeconds: 1, name: 'a' }])).toBe('two policies are named "a"; give each its own name');
    expect(policiesProblem({ limit: 5, windowSeconds: 60 })).toBeUndefined();
  });
});
