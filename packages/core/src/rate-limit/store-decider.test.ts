/**
 * The store decider on its own: GCRA decisions asked of a rate-limit store, and the answer
 * it gives while that store fails or stays silent (`open` admits, `closed` refuses with 503,
 * `local` counts in process, starting from what this instance already admitted). Real
 * memory stores throughout; a failing store is a memory store behind a switch.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, isKeysetError, toProblem } from '../errors.ts';
import { createMemoryRateLimitStore } from './memory-store.ts';
import { createStoreDecider, type StoreDeciderOptions, type StoreErrorMode } from './store-decider.ts';
import type { RateLimitDecision, RateLimitLogger, RateLimitPolicy, RateLimitRequest, RateLimitStore } from './types.ts';

const fivePerMinute: RateLimitPolicy = { limit: 5, windowSeconds: 60 };

function fakeClock(start = 1_700_000_000_000): { clock: () => number; advance: (ms: number) => void } {
  let now = start;
  return { clock: () => now, advance: (ms) => void (now += ms) };
}

function recordingLogger(): RateLimitLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_details, message) => void lines.push(message) };
}

/** A memory store behind a switch: answering (as a promise, as a networked store does), failing, or silent. */
function switchableStore(clock: () => number): RateLimitStore & { mode: 'ok' | 'fail' | 'hang' | 'short'; calls: number } {
  const memory = createMemoryRateLimitStore({ clock });
  const store = {
    mode: 'ok' as 'ok' | 'fail' | 'hang' | 'short',
    calls: 0,
    decide(requests: readonly RateLimitRequest[], cost?: number): Promise<RateLimitDecision[]> {
      store.calls++;
      if (store.mode === 'fail') return Promise.reject(new Error('ECONNREFUSED'));
      if (store.mode === 'hang') return new Promise(() => undefined);
      if (store.mode === 'short') return Promise.resolve([]);
      return Promise.resolve(memory.decide(requests, cost));
    },
  };
  return store;
}

function decider(overrides: Partial<StoreDeciderOptions> & { clock: () => number }) {
  return createStoreDecider({ store: undefined, onStoreError: 'closed', timeoutMs: 1000, retryIntervalMs: 5000, logger: recordingLogger(), ...overrides });
}

/** What `ask` gave: the decisions, or what it threw or rejected with (a fallback within the retry interval throws at once). */
async function outcome(ask: () => RateLimitDecision[] | Promise<RateLimitDecision[]>): Promise<RateLimitDecision[] | { refused: unknown }> {
  try {
    return await ask();
  } catch (error) {
    return { refused: error };
  }
}

describe('createStoreDecider: options', () => {
  const { clock } = fakeClock();
  it.each([
    ['onStoreError', { onStoreError: 'retry' as StoreErrorMode }, /onStoreError must be 'open', 'closed' or 'local'/],
    ['timeoutMs', { timeoutMs: 0 }, /timeoutMs must be a positive number/],
    ['timeoutMs', { timeoutMs: Number.NaN }, /timeoutMs must be a positive number/],
    ['retryIntervalMs', { retryIntervalMs: -1 }, /retryIntervalMs must be a positive number/],
    ['store', { store: {} as RateLimitStore }, /store must implement decide/],
  ])('refuses a bad %s with a ConfigError when created', (_name, bad, message) => {
    expect(() => decider({ clock, ...bad })).toThrow(ConfigError);
    expect(() => decider({ clock, ...bad })).toThrow(message);
  });
});

describe('createStoreDecider: while the store answers', () => {
  it('decides on the memory store by default, synchronously, one decision per policy in order', () => {
    const { clock } = fakeClock();
    const stores = decider({ clock });
    const policies = [
      { ...fivePerMinute, name: 'minute' },
      { limit: 100, windowSeconds: 3600, name: 'hour' },
    ];
    const first = stores.decide('key_a', policies);
    expect(Array.isArray(first)).toBe(true);
    expect((first as RateLimitDecision[]).map((d) => [d.policy.name, d.allowed, d.remaining])).toEqual([
      ['minute', true, 4],
      ['hour', true, 99],
    ]);
    for (let i = 0; i < 4; i++) stores.decide('key_a', policies);
    const sixth = stores.decide('key_a', policies) as RateLimitDecision[];
    // All-or-nothing: the minute refuses the request, and so does every policy's decision.
    expect(sixth.map((d) => d.allowed)).toEqual([false, false]);
    expect((stores.decide('key_b', fivePerMinute) as RateLimitDecision[])[0]?.allowed).toBe(true);
    expect(stores.state).toBe('up');
  });

  it("hands back the store's own decisions, whatever the sequence of keys and policies (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), limit: fc.integer({ min: 1, max: 4 }), wait: fc.integer({ min: 0, max: 30_000 }) }), { maxLength: 40 }),
        (steps) => {
          const { clock, advance } = fakeClock();
          const stores = decider({ clock, store: createMemoryRateLimitStore({ clock }) });
          const reference = createMemoryRateLimitStore({ clock });
          for (const { key, limit, wait } of steps) {
            advance(wait);
            const policy = { limit, windowSeconds: 60, name: `l${limit}` };
            expect(stores.decide(key, policy)).toEqual(reference.decide([{ key, policy }], 1));
          }
        },
      ),
    );
  });

  it('refuses a store answer with the wrong number of decisions as a store failure', async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    store.mode = 'short';
    const stores = decider({ clock, store });
    const answer = await outcome(() => stores.decide('key_a', fivePerMinute));
    expect('refused' in answer && isKeysetError(answer.refused) && answer.refused.code).toBe('unavailable');
    expect(stores.state).toBe('closed');
  });

  it('passes a ConfigError from the store on as it is, with no fallback', () => {
    const { clock } = fakeClock();
    const store: RateLimitStore = {
      decide() {
        throw new ConfigError('the store was given a policy it cannot hold');
      },
    };
    const stores = decider({ clock, store, onStoreError: 'open' });
    expect(() => stores.decide('key_a', fivePerMinute)).toThrow(ConfigError);
    expect(stores.state).toBe('up');
  });
});

describe('createStoreDecider: while the store fails', () => {
  it("'closed' refuses with 503 and Retry-After, logs the outage once, and asks the store again only after the retry interval", async () => {
    const { clock, advance } = fakeClock();
    const store = switchableStore(clock);
    const logger = recordingLogger();
    const stores = decider({ clock, store, logger, retryIntervalMs: 4500 });
    store.mode = 'fail';
    const answer = await outcome(() => stores.decide('key_a', fivePerMinute));
    expect('refused' in answer).toBe(true);
    const problem = toProblem((answer as { refused: unknown }).refused);
    expect(problem.status).toBe(503);
    expect(problem.body.code).toBe('unavailable');
    expect(problem.headers['retry-after']).toBe('5');
    expect(stores.state).toBe('closed');

    // Within the interval the store is not asked: every request gets the fallback at once.
    for (let i = 0; i < 3; i++) expect('refused' in (await outcome(() => stores.decide('key_a', fivePerMinute)))).toBe(true);
    expect(store.calls).toBe(1);
    expect(logger.lines).toEqual(['rate-limit store failed; using the onStoreError fallback']);

    // Past it, one request probes the store; it answers, and the outage is over.
    advance(4500);
    store.mode = 'ok';
    const probed = await outcome(() => stores.decide('key_a', fivePerMinute));
    expect(Array.isArray(probed) && probed[0]?.allowed).toBe(true);
    expect(store.calls).toBe(2);
    expect(stores.state).toBe('up');
    expect(logger.lines).toEqual(['rate-limit store failed; using the onStoreError fallback', 'rate-limit store answers again']);
  });

  it("'open' admits every policy, marked degraded, with no count", async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    store.mode = 'fail';
    const stores = decider({ clock, store, onStoreError: 'open' });
    const policies = [
      { limit: 1, windowSeconds: 60, name: 'one' },
      { limit: 2, windowSeconds: 60, name: 'two' },
    ];
    for (let i = 0; i < 5; i++) {
      const decisions = (await stores.decide('key_a', policies)) as RateLimitDecision[];
      expect(decisions.map((d) => [d.policy.name, d.allowed, d.degraded])).toEqual([
        ['one', true, 'open'],
        ['two', true, 'open'],
      ]);
    }
    expect(stores.state).toBe('open');
  });

  it("'local' counts in process from what this instance admitted while the store answered, not from a fresh burst", async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    const stores = decider({ clock, store, onStoreError: 'local' });
    for (let i = 0; i < 3; i++) expect(((await stores.decide('key_a', fivePerMinute)) as RateLimitDecision[])[0]?.allowed).toBe(true);
    store.mode = 'fail';
    const during: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const [decision] = (await stores.decide('key_a', fivePerMinute)) as RateLimitDecision[];
      expect(decision?.degraded).toBe('local');
      during.push(decision?.allowed === true);
    }
    // 5 a minute: 3 admitted through the store, so 2 more locally, then refusals.
    expect(during).toEqual([true, true, false, false]);
    expect(stores.state).toBe('local');
  });

  it('counts what a larger step decided (`answered`) into the local fallback too', async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    const stores = decider({ clock, store, onStoreError: 'local' });
    const requests = [{ key: 'key_a', policy: fivePerMinute }];
    const admitted = createMemoryRateLimitStore({ clock }).decide(requests, 1);
    for (let i = 0; i < 5; i++) stores.answered(requests, admitted);
    store.mode = 'fail';
    const [decision] = (await stores.decide('key_a', fivePerMinute)) as RateLimitDecision[];
    expect(decision).toMatchObject({ allowed: false, degraded: 'local' });
  });

  it('treats a store that stays silent past timeoutMs as failing', async () => {
    const { clock } = fakeClock();
    const store = switchableStore(clock);
    store.mode = 'hang';
    const stores = decider({ clock, store, timeoutMs: 5 });
    const answer = await outcome(() => stores.decide('key_a', fivePerMinute));
    expect('refused' in answer && isKeysetError(answer.refused) && answer.refused.code).toBe('unavailable');
    expect(stores.state).toBe('closed');
  });

  it('does not call one failed reply an outage when a later request was answered first', async () => {
    const { clock } = fakeClock();
    const memory = createMemoryRateLimitStore({ clock });
    const pending: { reject: (error: Error) => void }[] = [];
    let hold = true;
    const store: RateLimitStore = {
      decide(requests, cost) {
        if (hold) return new Promise((_resolve, reject) => void pending.push({ reject }));
        return Promise.resolve(memory.decide(requests, cost));
      },
    };
    const logger = recordingLogger();
    const stores = decider({ clock, store, logger });
    const slow = outcome(() => stores.decide('key_a', fivePerMinute));
    hold = false;
    expect(((await stores.decide('key_b', fivePerMinute)) as RateLimitDecision[])[0]?.allowed).toBe(true);
    pending[0]?.reject(new Error('ECONNRESET'));
    // The slow request alone gets the fallback ('closed': 503); the store stays up, unlogged.
    const answer = await slow;
    expect('refused' in answer && isKeysetError(answer.refused) && answer.refused.code).toBe('unavailable');
    expect(stores.state).toBe('up');
    expect(logger.lines).toEqual([]);
  });
});
