/**
 * The guard over caches and memory stores (warm key cache, memory rate-limit store:
 * nothing waits on I/O) against the same guard over stores that answer on a later turn
 * of the event loop (no key cache, a rate-limit store that resolves later): on any sequence of requests (valid keys, keys
 * refused for scopes, revoked, unknown, malformed, missing, in the query string, over
 * their rate limit) both give the same caller and headers, or the same problem.
 * Failures print a seed and path: replay with fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../errors.ts';
import { createConcurrencyLimit } from '../concurrency/concurrency-limit.ts';
import { createMemoryRateLimitStore } from '../rate-limit/memory-store.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import type { RateLimitStore } from '../rate-limit/types.ts';
import { createApiKeyGuard, type ApiKeyGuardRequest, type ApiKeyGuardResult } from './api-key-guard.ts';
import { generateKey } from '../keys/key-format.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

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

  // Memory stores, the default key cache.
  const memoryGuard = createApiKeyGuard({
    keyring: createKeyring({ store: keys, prefix: PREFIX, clock, lastUsed: false, logger: quiet }),
    limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet }),
  });
  // The same decisions, every one of them answered later.
  const laterGuard = createApiKeyGuard({
    keyring: createKeyring({ store: laterStore(keys), prefix: PREFIX, clock, lastUsed: false, cache: false, logger: quiet }),
    limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet, store: laterRateLimitStore(createMemoryRateLimitStore({ clock })) }),
  });
  return { memoryGuard, laterGuard, keys, reader, texts, clock, quiet, advance: (ms: number) => (now += ms) };
}

const step = fc.record({
  key: fc.nat(7),
  scheme: fc.constantFrom('ApiKey ', 'apikey  ', 'Bearer '),
  inQuery: fc.boolean(),
  scopes: fc.constantFrom([], ['orders:read'], ['orders:write'], ['orders:read', 'orders:write']),
  waitMs: fc.constantFrom(0, 0, 0, 500, 20_000),
});

describe('guard.check: memory stores answer as stores that answer later', () => {
  it('same caller and headers, or the same problem, on any sequence of requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const { memoryGuard, laterGuard, texts, advance } = await world();
        for (const s of steps) {
          advance(s.waitMs);
          const text = texts[s.key]; // 6, 7: no Authorization header
          const request: ApiKeyGuardRequest = {
            authorization: text === undefined ? undefined : `${s.scheme}${text}`,
            url: `https://api.test/api/orders?limit=5${s.inQuery && text !== undefined ? `&api_key=${text}` : ''}`,
          };
          const options = { scopes: s.scopes };
          let memoryOutcome: Outcome;
          try {
            memoryOutcome = outcomeOf(await memoryGuard.check(request, options));
          } catch (error) {
            memoryOutcome = { ok: false, problem: toProblem(error) };
          }
          let laterOutcome: Outcome;
          try {
            laterOutcome = outcomeOf(await laterGuard.check(request, options));
          } catch (error) {
            laterOutcome = { ok: false, problem: toProblem(error) };
          }
          expect(memoryOutcome).toEqual(laterOutcome);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a warm key is answered from the cache: no store lookup, the RateLimit headers still counting', async () => {
    const { keys, reader, clock, quiet } = await world();
    let lookups = 0;
    const counted = { ...keys, findByDigest: (digest: Parameters<typeof keys.findByDigest>[0]) => (lookups++, keys.findByDigest(digest)) };
    const guard = createApiKeyGuard({
      keyring: createKeyring({ store: counted, prefix: PREFIX, clock, lastUsed: false, logger: quiet }),
      limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet }),
    });
    const request = { authorization: `ApiKey ${reader.key}`, url: 'https://api.test/api/orders' };
    const first = await guard.check(request, { scopes: ['orders:read'] });
    const second = await guard.check(request, { scopes: ['orders:read'] });
    expect(lookups).toBe(1);
    expect(first.headers.ratelimit).toMatch(/r=2/);
    expect(second.headers.ratelimit).toMatch(/r=1/);
  });

  it('a lease taken and then refused (rate limit, scopes checked first) is given back, so the slot stays free', async () => {
    const { keys, reader, texts, clock, quiet, advance } = await world();
    const guard = createApiKeyGuard({
      keyring: createKeyring({ store: laterStore(keys), prefix: PREFIX, clock, lastUsed: false, logger: quiet }),
      limiter: createRateLimiter({ defaultPolicy: { limit: 5, windowSeconds: 10 }, clock, logger: quiet, store: laterRateLimitStore(createMemoryRateLimitStore({ clock })) }),
      concurrency: createConcurrencyLimit({ max: 1, logger: quiet }),
    });
    const request = { authorization: `ApiKey ${reader.key}`, url: 'https://api.test/api/orders' };
    // The reader's own limit is 3 a minute: three pass (each released), the fourth takes the
    // lease, is refused by the limit, and must give the lease back.
    for (let i = 0; i < 3; i++) (await guard.check(request, { scopes: ['orders:read'] })).release?.();
    await expect(guard.check(request, { scopes: ['orders:read'] })).rejects.toMatchObject({ code: 'rate_limited' });
    // Refused for its scopes while the limit is spent: the 429 wins, and no lease is held.
    await expect(guard.check(request, { scopes: ['orders:write'] })).rejects.toMatchObject({ code: 'rate_limited' });
    advance(60_000);
    const held = await guard.check(request, { scopes: ['orders:read'] });
    // The slot is the admitted request's alone: a second one waits for it.
    await expect(guard.check(request, { scopes: ['orders:read'] })).rejects.toMatchObject({ code: 'concurrency_limited' });
    held.release?.();
    (await guard.check(request, { scopes: ['orders:read'] })).release?.();
    expect(texts[0]).toBe(reader.key);
  });
});
