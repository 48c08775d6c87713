/**
 * The guard's synchronous path (warm key cache, memory rate-limit store: no promise at
 * all) against the same guard over stores that answer with promises (no key cache, a
 * rate-limit store that resolves later): on any sequence of requests (valid keys, keys
 * refused for scopes, revoked, unknown, malformed, missing, in the query string, over
 * their rate limit) both give the same caller and headers, or the same problem.
 * Failures print a seed and path: replay with fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../errors.ts';
import { isPromiseLike, maybeSyncVariant } from '../maybe-promise.ts';
import { createMemoryRateLimitStore } from '../rate-limit/memory-store.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import type { RateLimitStore } from '../rate-limit/types.ts';
import { createApiKeyGuard, type ApiKeyGuardRequest, type ApiKeyGuardResult } from './api-key-guard.ts';
import { generateKey } from './key-format.ts';
import type { KeyStore } from './key-store.ts';
import { createKeyring } from './keyring.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createMemoryKeyStore } from './memory-key-store.ts';

const PREFIX = 'acme_live';
const T0 = Date.UTC(2025, 0, 1);

/** `inner`, answering every call on a later turn of the event loop. */
function laterStore(inner: KeyStore): KeyStore {
  const store: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(inner)) {
    store[name] = async (...args: unknown[]) => {
      await new Promise((resolve) => setImmediate(resolve));
      return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    };
  }
  return store as unknown as KeyStore;
}

function laterRateLimitStore(inner: RateLimitStore): RateLimitStore {
  return { decide: async (requests, cost) => (await new Promise((resolve) => setImmediate(resolve)), inner.decide(requests, cost)) };
}

type Outcome = { ok: true; id: string; headers: Record<string, string> } | { ok: false; problem: unknown };

const outcomeOf = (result: ApiKeyGuardResult): Outcome => ({ ok: true, id: result.key.id, headers: result.headers });

async function world() {
  let now = T0;
  const clock = () => now;
  const keys = createMemoryKeyStore();
  const quiet = { warn() {}, error() {} };
  const issuer = createKeyring({ store: keys, prefix: PREFIX, clock, lastUsed: false, logger: quiet });
  const reader = await createKeyAdmin(issuer).issue({ name: 'reader', scopes: ['orders:read'], rateLimit: { limit: 3, windowSeconds: 60 } });
  const writer = await createKeyAdmin(issuer).issue({ name: 'writer', scopes: ['orders:write'] });
  const revoked = await createKeyAdmin(issuer).issue({ name: 'revoked', scopes: ['orders:read'] });
  await createKeyAdmin(issuer).revoke(revoked.record.id);
  const texts = [reader.key, writer.key, revoked.key, generateKey(PREFIX), `${reader.key.slice(0, -1)}x`, 'not-a-key'];

  // Synchronous: memory stores, the default key cache.
  const syncGuard = createApiKeyGuard({
    keyring: createKeyring({ store: keys, prefix: PREFIX, clock, lastUsed: false, logger: quiet }),
    limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet }),
  });
  // The same decisions, every one of them through a promise.
  const asyncGuard = createApiKeyGuard({
    keyring: createKeyring({ store: laterStore(keys), prefix: PREFIX, clock, lastUsed: false, cache: false, logger: quiet }),
    limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet, store: laterRateLimitStore(createMemoryRateLimitStore({ clock })) }),
  });
  return { syncGuard, asyncGuard, texts, advance: (ms: number) => (now += ms) };
}

const step = fc.record({
  key: fc.nat(7),
  scheme: fc.constantFrom('ApiKey ', 'apikey  ', 'Bearer '),
  inQuery: fc.boolean(),
  scopes: fc.constantFrom([], ['orders:read'], ['orders:write'], ['orders:read', 'orders:write']),
  waitMs: fc.constantFrom(0, 0, 0, 500, 20_000),
});

describe('guard.check: the synchronous path answers as the asynchronous one', () => {
  it('same caller and headers, or the same problem, on any sequence of requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const { syncGuard, asyncGuard, texts, advance } = await world();
        const fast = maybeSyncVariant(syncGuard.check);
        expect(fast).toBeTypeOf('function');
        for (const s of steps) {
          advance(s.waitMs);
          const text = texts[s.key]; // 6, 7: no Authorization header
          const request: ApiKeyGuardRequest = {
            authorization: text === undefined ? undefined : `${s.scheme}${text}`,
            url: `https://api.test/api/orders?limit=5${s.inQuery && text !== undefined ? `&api_key=${text}` : ''}`,
          };
          const options = { scopes: s.scopes };
          let syncOutcome: Outcome;
          try {
            const result = fast!(request, options);
            syncOutcome = outcomeOf(isPromiseLike(result) ? await result : result);
          } catch (error) {
            syncOutcome = { ok: false, problem: toProblem(error) };
          }
          let asyncOutcome: Outcome;
          try {
            asyncOutcome = outcomeOf(await asyncGuard.check(request, options));
          } catch (error) {
            asyncOutcome = { ok: false, problem: toProblem(error) };
          }
          expect(syncOutcome).toEqual(asyncOutcome);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a warm key with a memory limiter passes without a promise', async () => {
    const { syncGuard, texts } = await world();
    const request = { authorization: `ApiKey ${texts[0]}`, url: 'https://api.test/api/orders' };
    await syncGuard.check(request, { scopes: ['orders:read'] }); // cold: the store is asked
    const result = maybeSyncVariant(syncGuard.check)!(request, { scopes: ['orders:read'] });
    expect(isPromiseLike(result)).toBe(false);
    expect((result as ApiKeyGuardResult).headers.ratelimit).toMatch(/r=1/);
  });

  it('a replaced check loses the synchronous twin, so wrappers keep working', async () => {
    const { syncGuard } = await world();
    const wrapped = { ...syncGuard, check: (...args: Parameters<typeof syncGuard.check>) => syncGuard.check(...args) };
    expect(maybeSyncVariant(wrapped.check)).toBeUndefined();
    expect(maybeSyncVariant(syncGuard.check)).toBeTypeOf('function');
  });
});
