import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, KeysetError, isKeysetError, toProblem } from '../errors.ts';
import { createMemoryRateLimitStore } from './memory-store.ts';
import { createRateLimiter, type RateLimitLogger } from './rate-limiter.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest, RateLimitStore } from './types.ts';

const fivePerMinute: RateLimitPolicy = { limit: 5, windowSeconds: 60 };

function fakeClock(start = 1_700_000_000_000): { clock: () => number; advance: (ms: number) => void } {
  let now = start;
  return { clock: () => now, advance: (ms) => (now += ms) };
}

function recordingLogger(): RateLimitLogger & { lines: { details: Record<string, unknown>; message: string }[] } {
  const lines: { details: Record<string, unknown>; message: string }[] = [];
  return { lines, warn: (details, message) => lines.push({ details, message }) };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A store that can be switched between working (memory), failing and hanging. */
function switchableStore(clock: () => number): RateLimitStore & { mode: 'ok' | 'fail' | 'hang'; calls: number } {
  const memory = createMemoryRateLimitStore({ clock });
  const store = {
    mode: 'ok' as 'ok' | 'fail' | 'hang',
    calls: 0,
    decide(requests: readonly RateLimitRequest[], cost?: number): Promise<RateLimitDecision[]> {
      store.calls++;
      if (store.mode === 'fail') return Promise.reject(new Error('ECONNREFUSED'));
      if (store.mode === 'hang') return new Promise(() => undefined);
      return Promise.resolve(memory.decide(requests, cost));
    },
  };
  return store;
}

describe('createRateLimiter', () => {
  let unhandled: unknown[];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('admits with RateLimit headers, then refuses with a 429 problem carrying Retry-After', async () => {
    const { clock } = fakeClock();
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, clock });
    const first = await limiter.check('key_a');
    expect(first.decision).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 12 });
    expect(first.headers).toEqual({ 'ratelimit-policy': '"default";q=5;w=60', ratelimit: '"default";r=4;t=12' });
    for (let i = 0; i < 4; i++) await limiter.check('key_a');
    const error = await rejection(limiter.check('key_a'));
    expect(error).toBeInstanceOf(KeysetError);
    const problem = toProblem(error);
    expect(problem.status).toBe(429);
    expect(problem.headers).toMatchObject({
      'content-type': 'application/problem+json',
      'retry-after': '12',
      'ratelimit-policy': '"default";q=5;w=60',
      ratelimit: '"default";r=0;t=60',
    });
    expect(problem.body).toMatchObject({ code: 'rate_limited', status: 429, retry_after: 12 });
  });

  it('applies a per-key policy instead of the default', async () => {
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, clock: fakeClock().clock });
    const admitted = async (key: string, policy?: RateLimitPolicy): Promise<number> => {
      let n = 0;
      for (let i = 0; i < 30; i++) {
        try {
          await limiter.check(key, policy);
          n++;
        } catch (error) {
          if (!isKeysetError(error) || error.code !== 'rate_limited') throw error;
        }
      }
      return n;
    };
    expect(await admitted('default')).toBe(5);
    expect(await admitted('big', { limit: 20, windowSeconds: 60 })).toBe(20);
    expect(await admitted('small', { limit: 1, windowSeconds: 60 })).toBe(1);
  });

  it('ignores an invalid per-key policy in favour of the default, and says so once', async () => {
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, clock: fakeClock().clock, logger });
    const broken = { limit: 0, windowSeconds: 60 } as RateLimitPolicy;
    const { decision } = await limiter.check('key_a', broken);
    expect(decision.policy).toEqual(fivePerMinute);
    await limiter.check('key_a', broken);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]?.details).toMatchObject({ key: 'key_a', problem: expect.stringContaining('limit') });
  });

  it('accepts a null policy (an identity without its own limit) as the default', async () => {
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, clock: fakeClock().clock });
    const { decision } = await limiter.check('key_a', null as unknown as undefined);
    expect(decision.policy).toEqual(fivePerMinute);
  });

  it('refuses bad options at creation with a ConfigError', () => {
    expect(() => createRateLimiter({ defaultPolicy: { limit: 0, windowSeconds: 60 } })).toThrow(ConfigError);
    expect(() => createRateLimiter({} as never)).toThrow(ConfigError);
    expect(() => createRateLimiter({ defaultPolicy: fivePerMinute, onStoreError: 'ignore' as never })).toThrow(ConfigError);
    expect(() => createRateLimiter({ defaultPolicy: fivePerMinute, timeoutMs: 0 })).toThrow(ConfigError);
    expect(() => createRateLimiter({ defaultPolicy: fivePerMinute, store: {} as never })).toThrow(ConfigError);
  });

  it("fails open with onStoreError 'open': admits, sends no made-up numbers, logs once", async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1, windowSeconds: 60 }, store, onStoreError: 'open', clock, logger });
    store.mode = 'fail';
    for (let i = 0; i < 10; i++) {
      const { decision, headers } = await limiter.check('key_a');
      expect(decision).toMatchObject({ allowed: true, degraded: 'open' });
      expect(headers).toEqual({});
    }
    expect(limiter.storeState).toBe('open');
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]?.details).toMatchObject({ mode: 'open', error: 'Error: ECONNREFUSED' });
  });

  it("fails closed with onStoreError 'closed': 503 unavailable, never 429", async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, onStoreError: 'closed', clock, logger: recordingLogger() });
    store.mode = 'fail';
    const error = await rejection(limiter.check('key_a'));
    const problem = toProblem(error);
    expect(problem.status).toBe(503);
    expect(problem.body.code).toBe('unavailable');
    expect(problem.headers['retry-after']).toBe('1');
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("falls back to an exact in-process limit with onStoreError 'local', then returns to the store", async () => {
    const { clock, advance } = fakeClock();
    const store = switchableStore(clock);
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, clock, logger, retryIntervalMs: 1000 });
    expect((await limiter.check('key_a')).decision.degraded).toBeUndefined();
    store.mode = 'fail';
    const outcomes: (string | undefined)[] = [];
    for (let i = 0; i < 8; i++) {
      try {
        outcomes.push((await limiter.check('key_a')).decision.degraded);
      } catch (error) {
        outcomes.push((error as KeysetError).code);
      }
    }
    // The fallback knows the one request the store admitted: exactly 4 more, then 429 (not 503).
    expect(outcomes).toEqual(['local', 'local', 'local', 'local', 'rate_limited', 'rate_limited', 'rate_limited', 'rate_limited']);
    // While down, the store is asked only once per retry interval.
    expect(store.calls).toBe(2);
    expect(limiter.storeState).toBe('local');
    store.mode = 'ok';
    advance(999);
    await rejection(limiter.check('key_a'));
    expect(store.calls).toBe(2);
    advance(1);
    // The probe goes to the store, which still holds key_a's one request: 4 left.
    const back = await limiter.check('key_a');
    expect(back.decision).toMatchObject({ allowed: true, remaining: 3 });
    expect(back.decision.degraded).toBeUndefined();
    expect(limiter.storeState).toBe('up');
    expect(logger.lines.map((l) => l.message)).toEqual([
      'rate-limit store failed; using the onStoreError fallback',
      'rate-limit store answers again',
    ]);
  });

  it("never hands out a fresh burst: the 'local' fallback lives as long as the limiter", async () => {
    const { clock, advance } = fakeClock();
    const store = switchableStore(clock);
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, clock, logger: recordingLogger(), retryIntervalMs: 1000 });
    const admittedDuring = async (attempts: number): Promise<number> => {
      let admitted = 0;
      for (let i = 0; i < attempts; i++) {
        admitted += await limiter.check('key_a').then(
          () => 1,
          (error: unknown) => {
            if (isKeysetError(error) && error.code === 'rate_limited') return 0;
            throw error;
          },
        );
      }
      return admitted;
    };
    // Three short outages within one window, the store answering in between (and
    // admitting nothing more, its own count being full by then).
    expect(await admittedDuring(3)).toBe(3); // store: 3 of 5
    for (let outage = 0; outage < 3; outage++) {
      store.mode = 'fail';
      const admitted = await admittedDuring(10);
      expect(admitted, `outage ${outage}`).toBe(outage === 0 ? 2 : 0);
      store.mode = 'ok';
      advance(1000);
      await admittedDuring(1);
    }
  });

  it('does not time out a store that keeps answering, however long its queue', async () => {
    // A loaded server: it answers one decision every 20 ms, in order. 20 decisions sent at
    // once wait up to 400 ms each, far past timeoutMs, but the store is never silent for it.
    const memory = createMemoryRateLimitStore();
    const queue: (() => void)[] = [];
    const interval = setInterval(() => queue.shift()?.(), 20);
    const store: RateLimitStore = {
      decide: (requests, cost) => new Promise((resolve) => queue.push(() => resolve(memory.decide(requests, cost)))),
    };
    const logger = recordingLogger();
    try {
      const limiter = createRateLimiter({ defaultPolicy: { limit: 10, windowSeconds: 3600 }, store, timeoutMs: 150, logger });
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => limiter.check('key_a')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      expect(results.every((r) => r.status === 'fulfilled' ? r.value.decision.degraded === undefined : isKeysetError(r.reason))).toBe(true);
      expect(logger.lines).toEqual([]);
      expect(limiter.storeState).toBe('up');
    } finally {
      clearInterval(interval);
    }
  });

  it('a failed decision while other decisions are answered is not an outage', async () => {
    const memory = createMemoryRateLimitStore();
    let calls = 0;
    let failFirst: (error: Error) => void = () => undefined;
    const store: RateLimitStore = {
      decide: (requests, cost) => {
        calls++;
        if (calls === 1) return new Promise((_, reject) => (failFirst = reject));
        return Promise.resolve(memory.decide(requests, cost));
      },
    };
    const logger = recordingLogger();
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, logger });
    const first = limiter.check('key_a');
    await limiter.check('key_b'); // answered after the first was sent
    failFirst(new Error('ERR a one-off error reply'));
    expect((await first).decision.degraded).toBe('local');
    expect(limiter.storeState).toBe('up');
    expect(logger.lines).toEqual([]);
    expect((await limiter.check('key_a')).decision.degraded).toBeUndefined();
  });

  it('times out a hanging store, falls back, and lets only one probe wait at a time', async () => {
    const { clock, advance } = fakeClock();
    const store = switchableStore(clock);
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, clock, timeoutMs: 50, logger: recordingLogger() });
    store.mode = 'hang';
    const started = performance.now();
    expect((await limiter.check('key_a')).decision.degraded).toBe('local');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    advance(1000);
    let probeDone = false;
    const probe = limiter.check('key_b').finally(() => (probeDone = true)); // the probe: waits for the timeout
    const others = await Promise.all([limiter.check('key_c'), limiter.check('key_d')]); // answered locally, at once
    expect(probeDone).toBe(false);
    expect(others.map((o) => o.decision.degraded)).toEqual(['local', 'local']);
    expect((await probe).decision.degraded).toBe('local');
    expect(store.calls).toBe(2);
  });

  it('passes a ConfigError from the store through instead of treating it as an outage', async () => {
    const store: RateLimitStore = {
      decide: () => Promise.reject(new ConfigError('cluster keys span slots')),
    };
    const limiter = createRateLimiter({ defaultPolicy: fivePerMinute, store, logger: recordingLogger() });
    await expect(limiter.check('key_a')).rejects.toBeInstanceOf(ConfigError);
    expect(limiter.storeState).toBe('up');
  });
});
