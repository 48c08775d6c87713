/**
 * The limiter's several-policies, quota, header-format and onDecision behaviour (the
 * single-policy and store-outage behaviour is in rate-limiter.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, isKeysetError, type KeysetError } from '../errors.ts';
import { createMemoryQuotaStore } from '../quota/memory-quota-store.ts';
import type { Quota, QuotaStore } from '../quota/types.ts';
import type { DecisionEvent } from './decision-event.ts';
import { createMemoryRateLimitStore } from './memory-store.ts';
import { createRateLimiter, type RateLimitLogger } from './rate-limiter.ts';
import type { RateLimitPolicy } from './types.ts';

const second: RateLimitPolicy = { name: 'second', limit: 3, windowSeconds: 1 };
const minute: RateLimitPolicy = { name: 'minute', limit: 5, windowSeconds: 60 };

function fakeClock(start = Date.UTC(2026, 0, 31, 23, 59, 0)): { clock: () => number; advance: (ms: number) => void } {
  let now = start;
  return { clock: () => now, advance: (ms) => (now += ms) };
}

function recordingLogger(): RateLimitLogger & { lines: { details: Record<string, unknown>; message: string }[] } {
  const lines: { details: Record<string, unknown>; message: string }[] = [];
  return { lines, warn: (details, message) => lines.push({ details, message }) };
}

async function refusal(promise: Promise<unknown>): Promise<KeysetError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isKeysetError(error)) throw new Error(`expected a KeysetError, got ${String(error)}`);
  return error;
}

describe('several named policies', () => {
  it('decides them all-or-nothing: the tighter one refuses first, a refusal consumes nothing, Retry-After is the longest wait', async () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const limiter = createRateLimiter({ defaultPolicy: [second, minute], store, clock, logger: recordingLogger() });
    for (let i = 0; i < 3; i++) await limiter.check('k');
    const perSecond = await refusal(limiter.check('k'));
    expect(perSecond.code).toBe('rate_limited');
    expect(perSecond.headers['retry-after']).toBe('1');
    // The refused 4th request did not count against "minute": 2 left there.
    expect(store.decide([{ key: 'k', policy: minute }], 0)[0]?.remaining).toBe(2);
    advance(1000);
    const { headers, decisions } = await limiter.check('k');
    expect(headers['ratelimit-policy']).toBe('"second";q=3;w=1, "minute";q=5;w=60');
    expect(headers.ratelimit).toMatch(/^"second";r=\d+;t=\d+, "minute";r=1;t=\d+$/);
    expect(decisions?.map((d) => d.policy.name)).toEqual(['second', 'minute']);
    await limiter.check('k');
    advance(1000);
    const perMinute = await refusal(limiter.check('k'));
    // "second" would admit; "minute" refuses and its wait (12 s emission interval) wins.
    expect(Number(perMinute.headers['retry-after'])).toBeGreaterThan(1);
    expect(perMinute.extensions.retry_after).toBe(Number(perMinute.headers['retry-after']));
  });

  it("a key's own list replaces the default; an invalid list (two policies with one name) falls back to the default, logged once", async () => {
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, logger });
    const own = await limiter.check('a', [second, minute]);
    expect(own.headers['ratelimit-policy']).toBe('"second";q=3;w=1, "minute";q=5;w=60');
    const bad = [second, { ...minute, name: 'second' }];
    expect((await limiter.check('b', bad)).headers['ratelimit-policy']).toBe('"default";q=100;w=60');
    await limiter.check('b', bad);
    expect(logger.lines.filter((l) => /invalid per-key/.test(l.message))).toHaveLength(1);
  });

  it('refuses an invalid default list at construction', () => {
    expect(() => createRateLimiter({ defaultPolicy: [] })).toThrow(ConfigError);
    expect(() => createRateLimiter({ defaultPolicy: [second, second] })).toThrow(/named "second"/);
    expect(() => createRateLimiter({ defaultPolicy: [second, { limit: 0, windowSeconds: 1 }] })).toThrow(ConfigError);
  });
});

describe('quotas', () => {
  const quota = (over: Partial<Quota> = {}): Quota => ({ remaining: 5, refill: null, setAt: new Date(Date.UTC(2026, 0, 1)), ...over });

  it('spends the cost, then refuses with 429 quota_exhausted (no Retry-After without a refill), distinct from rate_limited', async () => {
    const { clock } = fakeClock();
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, clock, logger: recordingLogger() });
    const q = quota();
    expect((await limiter.check('k', undefined, { quota: q, cost: 2 })).quota).toMatchObject({ allowed: true, cost: 2, remaining: 3 });
    expect((await limiter.check('k', undefined, { quota: q, cost: 3 })).quota?.remaining).toBe(0);
    const error = await refusal(limiter.check('k', undefined, { quota: q, cost: 1 }));
    expect([error.status, error.code]).toEqual([429, 'quota_exhausted']);
    expect(error.headers['retry-after']).toBeUndefined();
    expect(error.headers['ratelimit-policy']).toBe('"default";q=100;w=60');
    expect(error.extensions).toEqual({ quota: 'key', quota_remaining: 0, cost: 1 });
    // Cost 0 (a free route) is always admitted.
    expect((await limiter.check('k', undefined, { quota: q, cost: 0 })).quota?.remaining).toBe(0);
  });

  it('monthly refill: Retry-After points at 00:00 UTC on the 1st, and the credits are back then', async () => {
    const { clock, advance } = fakeClock(Date.UTC(2026, 0, 31, 23, 59, 0));
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, clock, logger: recordingLogger() });
    const q = quota({ remaining: 1, refill: { amount: 10, interval: 'monthly' } });
    const first = await limiter.check('k', undefined, { quota: q });
    expect(first.quota?.nextRefillAt?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    const error = await refusal(limiter.check('k', undefined, { quota: q }));
    expect(error.headers['retry-after']).toBe('60');
    expect(error.extensions.retry_after).toBe(60);
    advance(60_000);
    expect((await limiter.check('k', undefined, { quota: q })).quota?.remaining).toBe(9);
  });

  it('a request refused by the rate limit spends no credit; one refused for its scopes spends none but counts', async () => {
    const limiter = createRateLimiter({ defaultPolicy: { limit: 2, windowSeconds: 60 }, logger: recordingLogger() });
    const q = quota({ remaining: 10 });
    await limiter.check('k', undefined, { quota: q, refusal: 'insufficient_scope' });
    await limiter.check('k', undefined, { quota: q });
    expect((await refusal(limiter.check('k', undefined, { quota: q }))).code).toBe('rate_limited');
    expect((await limiter.readQuota('k', q)).remaining).toBe(9);
  });

  it('a newer setAt (an administrator set the credits) restarts the count; readQuota spends nothing', async () => {
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, logger: recordingLogger() });
    await limiter.check('k', undefined, { quota: quota({ remaining: 2 }), cost: 2 });
    const reset = quota({ remaining: 7, setAt: new Date(Date.UTC(2026, 0, 2)) });
    expect((await limiter.readQuota('k', reset)).remaining).toBe(7);
    expect((await limiter.readQuota('k', reset)).remaining).toBe(7);
  });

  it('a failing or hanging quota store is 503 unavailable (no local count), or admits with onStoreError open', async () => {
    const failing: QuotaStore = { spend: () => Promise.reject(new Error('ECONNREFUSED')) };
    const hanging: QuotaStore = { spend: () => new Promise(() => undefined) };
    for (const quotaStore of [failing, hanging]) {
      const closed = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, quotaStore, timeoutMs: 20, logger: recordingLogger() });
      const error = await refusal(closed.check('k', undefined, { quota: quota() }));
      expect([error.status, error.code]).toEqual([503, 'unavailable']);
      expect(error.headers['ratelimit-policy']).toBe('"default";q=100;w=60');
    }
    const events: DecisionEvent[] = [];
    const open = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, quotaStore: failing, onStoreError: 'open', onDecision: (e) => void events.push(e), logger: recordingLogger() });
    expect((await open.check('k', undefined, { quota: quota(), cost: 7 })).quota).toMatchObject({ allowed: true, cost: 0 });
    // The usage event (what billing counts) says nothing was spent.
    expect(events).toEqual([expect.objectContaining({ outcome: 'allowed', cost: 0, degraded: 'open' })]);
  });

  it('an invalid quota on a key (bad row) is 503, never a free pass, logged once', async () => {
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, logger });
    const bad = quota({ remaining: -3 });
    expect((await refusal(limiter.check('k', undefined, { quota: bad }))).code).toBe('unavailable');
    await refusal(limiter.check('k', undefined, { quota: bad }));
    expect(logger.lines.filter((l) => /invalid quota/.test(l.message))).toHaveLength(1);
  });

  it('refuses a cost that is not an integer from 0 to 1,000,000 with ConfigError', async () => {
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 } });
    for (const cost of [-1, 1.5, Number.NaN, 1_000_001]) {
      await expect(limiter.check('k', undefined, { quota: quota(), cost })).rejects.toThrow(ConfigError);
    }
  });

  it('keeps counts in the given quota store', async () => {
    const quotaStore = createMemoryQuotaStore();
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, quotaStore });
    await limiter.check('k', undefined, { quota: quota() });
    expect(quotaStore.size).toBe(1);
  });
});

describe('headers option', () => {
  it("sends draft-7 and legacy headers when asked, on success and on refusal", async () => {
    const { clock } = fakeClock(Date.UTC(2026, 5, 1));
    const limiter = createRateLimiter({ defaultPolicy: { limit: 2, windowSeconds: 60 }, headers: ['draft-7', 'legacy'], clock });
    const { headers } = await limiter.check('k');
    expect(headers).toEqual({
      'ratelimit-policy': '2;w=60',
      ratelimit: 'limit=2, remaining=1, reset=30',
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': String(Date.UTC(2026, 5, 1) / 1000 + 30),
    });
    await limiter.check('k');
    const error = await refusal(limiter.check('k'));
    expect(error.headers).toMatchObject({ ratelimit: 'limit=2, remaining=0, reset=60', 'x-ratelimit-remaining': '0', 'retry-after': '30' });
  });

  it('refuses draft-11 with draft-7 at construction', () => {
    expect(() => createRateLimiter({ defaultPolicy: second, headers: ['draft-11', 'draft-7'] })).toThrow(ConfigError);
  });
});

describe('onDecision', () => {
  const q: Quota = { remaining: 1, refill: null, setAt: new Date(0) };

  it('reports each decision with key id, environment, route, outcome, policy and cost', async () => {
    const events: DecisionEvent[] = [];
    const limiter = createRateLimiter({ defaultPolicy: [second, minute], onDecision: (e) => void events.push(e) });
    const context = { route: 'GET /api/orders', environment: 'live' };
    await limiter.check('key_1', undefined, { ...context, quota: q });
    await refusal(limiter.check('key_1', undefined, { ...context, quota: q }));
    await limiter.check('key_1', undefined, { ...context, refusal: 'insufficient_scope' });
    await refusal(limiter.check('key_1', undefined, context));
    expect(events).toEqual([
      { keyId: 'key_1', environment: 'live', route: 'GET /api/orders', outcome: 'allowed', policy: 'second', cost: 1, remaining: 2, quotaRemaining: 0 },
      { keyId: 'key_1', environment: 'live', route: 'GET /api/orders', outcome: 'quota_exhausted', policy: 'quota', cost: 0, remaining: 1, quotaRemaining: 0 },
      { keyId: 'key_1', environment: 'live', route: 'GET /api/orders', outcome: 'insufficient_scope', policy: 'second', cost: 0, remaining: 0 },
      { keyId: 'key_1', environment: 'live', route: 'GET /api/orders', outcome: 'rate_limited', policy: 'second', cost: 0, remaining: 0 },
    ]);
  });

  it('a throwing, rejecting or never-settling hook never affects the request; failures are logged at most once a minute', async () => {
    const logger = recordingLogger();
    const hooks = [
      () => {
        throw new Error('boom');
      },
      () => Promise.reject(new Error('async boom')),
      () => new Promise<void>(() => undefined),
    ];
    for (const onDecision of hooks) {
      const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, onDecision, logger });
      for (let i = 0; i < 3; i++) expect((await limiter.check('k')).decision.allowed).toBe(true);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    const failures = logger.lines.filter((l) => /onDecision hook failed/.test(l.message));
    // One line per limiter that failed (throwing, rejecting), not one per request; the silent one logs nothing.
    expect(failures.map((l) => l.details.error)).toEqual(['Error: boom', 'Error: async boom']);
  });

  it('a throwing logger under a throwing hook does not fail the request either', async () => {
    const limiter = createRateLimiter({
      defaultPolicy: { limit: 100, windowSeconds: 60 },
      onDecision: () => {
        throw new Error('boom');
      },
      logger: {
        warn: () => {
          throw new Error('logger down');
        },
      },
    });
    expect((await limiter.check('k')).decision.allowed).toBe(true);
  });
});
