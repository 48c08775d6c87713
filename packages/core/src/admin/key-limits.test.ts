/**
 * Several named rate limits and a usage quota on a key: issued, updated, enforced by the
 * guard, with the admin input validated field by field.
 */
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { KeysetError } from '../errors.ts';
import { createMemoryQuotaStore } from '../quota/memory-quota-store.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { createApiKeyGuard } from '../auth/api-key-guard.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const T0 = Date.UTC(2026, 0, 31, 23, 0, 0);

function setup() {
  let now = T0;
  const clock = (): number => now;
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_test', clock });
  const events: DecisionEvent[] = [];
  const limiter = createRateLimiter({
    defaultPolicy: { limit: 1000, windowSeconds: 60 },
    quotaStore: createMemoryQuotaStore(),
    clock,
    onDecision: (e) => void events.push(e),
  });
  const guard = createApiKeyGuard({ keyring, limiter });
  return { keyring, limiter, guard, events, advance: (ms: number) => (now += ms), clock };
}

const refusal = (promise: Promise<unknown>): Promise<KeysetError> => rejectionOf(promise, KeysetError);

const auth = (key: string) => ({ authorization: `ApiKey ${key}`, url: '/api/orders' });

describe('keys with several rate limits and a quota', () => {
  it('issues them, shows them on the record and the verified key, and the guard enforces all of them', async () => {
    const { keyring, guard } = setup();
    const { key, record } = await createKeyAdmin(keyring).issue({
      name: 'svc',
      scopes: ['orders:read'],
      rateLimits: [
        { name: 'second', limit: 2, windowSeconds: 1 },
        { name: 'day', limit: 10_000, windowSeconds: 86_400 },
      ],
      quota: { remaining: 3, refill: { amount: 100, interval: 'monthly' } },
    });
    expect(record.rateLimits).toEqual([
      { name: 'second', limit: 2, windowSeconds: 1 },
      { name: 'day', limit: 10_000, windowSeconds: 86_400 },
    ]);
    expect(record.rateLimit).toEqual({ name: 'second', limit: 2, windowSeconds: 1 });
    expect(JSON.parse(JSON.stringify(record)).quota).toEqual({ remaining: 3, refill: { amount: 100, interval: 'monthly' }, setAt: new Date(T0).toISOString() });
    const first = await guard.check(auth(key), { cost: 2, route: 'GET /api/orders' });
    expect(first.key.rateLimits).toHaveLength(2);
    expect(first.headers['ratelimit-policy']).toBe('"second";q=2;w=1, "day";q=10000;w=86400');
    // The per-second limit refuses before the quota is asked: no credit spent.
    await guard.check(auth(key), { cost: 0 });
    expect((await refusal(guard.check(auth(key), { cost: 1 }))).code).toBe('rate_limited');
  });

  it('quota: spends the route cost, 429 quota_exhausted with Retry-After at 00:00 UTC on the 1st, refilled after', async () => {
    const { keyring, guard, advance, events } = setup();
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'svc', scopes: [], quota: { remaining: 5, refill: { amount: 50, interval: 'monthly' } } });
    await guard.check(auth(key), { cost: 4, route: 'POST /api/reports' });
    const exhausted = await refusal(guard.check(auth(key), { cost: 2, route: 'POST /api/reports' }));
    expect([exhausted.status, exhausted.code]).toEqual([429, 'quota_exhausted']);
    expect(exhausted.headers['retry-after']).toBe(String(3600)); // 23:00 → 00:00 UTC Feb 1
    expect(exhausted.extensions).toMatchObject({ quota_remaining: 1, cost: 2, retry_after: 3600 });
    expect(events.map((e) => [e.keyId, e.outcome, e.cost, e.route])).toEqual([
      [record.id, 'allowed', 4, 'POST /api/reports'],
      [record.id, 'quota_exhausted', 0, 'POST /api/reports'],
    ]);
    advance(3600 * 1000);
    await guard.check(auth(key), { cost: 2 });
  });

  it('updateLimits sets remaining (the count restarts) and the refill, evicting cached keys at once', async () => {
    const { keyring, guard, limiter, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'svc', scopes: [], quota: { remaining: 1 } });
    await guard.check(auth(key));
    expect((await refusal(guard.check(auth(key)))).code).toBe('quota_exhausted');
    const updated = await admin.updateLimits(record.id, { quota: { remaining: 2, refill: { amount: 7, interval: 3600 } } });
    expect(updated.quota).toMatchObject({ remaining: 2, refill: { amount: 7, interval: 3600 } });
    // The cached verified key carried the old quota: it was evicted, the new one applies now.
    await guard.check(auth(key));
    expect((await limiter.readQuota(record.id, updated.quota!)).remaining).toBe(1);
    // Left out, `refill` is kept; `rateLimits` replaces the default.
    const again = await admin.updateLimits(record.id, { quota: { remaining: 9 }, rateLimits: [{ name: 'minute', limit: 1, windowSeconds: 60 }] });
    // Two updates in one millisecond still get increasing generations.
    expect(again.quota).toEqual({ remaining: 9, refill: { amount: 7, interval: 3600 }, setAt: new Date(clock() + 2) });
    expect((await guard.check(auth(key))).headers['ratelimit-policy']).toBe('"minute";q=1;w=60');
    const cleared = await admin.updateLimits(record.id, { quota: null, rateLimits: null });
    expect([cleared.quota, cleared.rateLimits, cleared.rateLimit]).toEqual([null, null, null]);
  });

  it('refuses bad limits and quotas with invalid_request naming the field, and unknown ids with not_found', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const cases: [unknown, string][] = [
      [{ rateLimits: [] }, 'rateLimits'],
      [{ rateLimits: [{ limit: 1, windowSeconds: 1 }, { limit: 2, windowSeconds: 2 }] }, 'rateLimits[1].name'],
      [{ rateLimits: [{ limit: 0, windowSeconds: 1 }] }, 'rateLimits[0]'],
      [{ rateLimit: { limit: 1, windowSeconds: 1 }, rateLimits: [{ limit: 1, windowSeconds: 1 }] }, 'rateLimits'],
      [{ quota: { remaining: -1 } }, 'quota.remaining'],
      [{ quota: { remaining: 1.5 } }, 'quota.remaining'],
      [{ quota: { remaining: 1, refill: { amount: 0, interval: 'daily' } } }, 'quota.refill.amount'],
      [{ quota: { remaining: 1, refill: { amount: 1, interval: 'weekly' } } }, 'quota.refill.interval'],
      [{ quota: 'lots' }, 'quota'],
    ];
    for (const [input, field] of cases) {
      const error = await refusal(admin.issue({ name: 'x', scopes: [], ...(input as object) }));
      expect([error.code, error.extensions.field]).toEqual(['invalid_request', field]);
    }
    const { record } = await admin.issue({ name: 'x', scopes: [] });
    expect((await refusal(admin.updateLimits(record.id, { quota: { remaining: -5 } }))).extensions.field).toBe('quota.remaining');
    expect((await refusal(admin.updateLimits('key_0000000000000000000000', { quota: null }))).code).toBe('not_found');
  });

  it('tells onChange listeners (a revocation bus) about an update', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const seen: string[] = [];
    keyring.onChange((e) => void seen.push(e.type));
    const { record } = await admin.issue({ name: 'x', scopes: [] });
    await admin.updateLimits(record.id, { quota: { remaining: 1 } });
    expect(seen).toEqual(['updated']);
  });
});
