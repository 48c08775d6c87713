/**
 * No attribute keyset records holds key text: whatever shape a presented key has (issued
 * and valid, revoked, one character off, another prefix, junk, in the query string), no
 * span attribute and no metric attribute contains it, nor its secret part.
 */
import { createApiKeyGuard, createKeyAdmin, createKeyring, createMemoryKeyStore, createMemoryRateLimitStore, createRateLimiter } from '@keyset/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTelemetry, type TestTelemetry } from './telemetry.test-support.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

let t: TestTelemetry;
beforeAll(() => {
  t = createTestTelemetry({ ownerAttribute: true });
});
afterAll(() => t.close());

/** Every string value of every attribute recorded so far, spans and metric points alike. */
async function recordedValues(): Promise<string[]> {
  const values: unknown[] = [];
  for (const span of t.spans()) values.push(span.name, ...Object.values(span.attributes), ...span.events.flatMap((e) => Object.values(e.attributes ?? {})));
  for (const metric of await t.metrics()) for (const point of metric.dataPoints) values.push(...Object.values(point.attributes));
  return values.filter((value): value is string => typeof value === 'string');
}

describe('no key text in telemetry', () => {
  it('holds for every key shape, in the header or the query string', async () => {
    const store = createMemoryKeyStore();
    const keyring = createKeyring({ store: t.telemetry.store('keys', store), prefix: 'acme_live', lastUsed: false });
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 1 }, store: t.telemetry.store('ratelimit', createMemoryRateLimitStore()), onDecision: t.telemetry.onDecision(), logger: { warn() {} } });
    const guard = t.telemetry.guard(createApiKeyGuard({ keyring: t.telemetry.keyring(keyring), limiter, refusedCredentials: false }));
    const admin = createKeyAdmin(keyring);
    const issued = await admin.issue({ name: 'live', scopes: ['orders:read'] });
    const revoked = await admin.issue({ name: 'gone', scopes: ['orders:read'] });
    await admin.revoke(revoked.record.id);

    const junk = fc.stringMatching(/^[0-9A-Za-z]{20,60}$/);
    const shape = fc.oneof(
      fc.constant(issued.key),
      fc.constant(revoked.key),
      fc.tuple(fc.nat(37), fc.constantFrom(...BASE62)).map(([at, c]) => {
        const body = issued.key.slice('acme_live_'.length);
        return `acme_live_${body.slice(0, at)}${c}${body.slice(at + 1)}`;
      }),
      junk.map((s) => `acme_live_${s}`),
      junk.map((s) => `other_test_${s}`),
      junk,
    );
    await fc.assert(
      fc.asyncProperty(shape, fc.boolean(), fc.constantFrom(['orders:read'], ['keys:admin']), async (key, inQuery, scopes) => {
        const request = inQuery ? { authorization: undefined, url: `https://api.test/api/orders?api_key=${key}` } : { authorization: `ApiKey ${key}`, url: 'https://api.test/api/orders' };
        const result = await guard.check(request, { scopes, route: 'GET /api/orders' }).catch(() => undefined);
        result?.release?.();
        const secret = key.replace(/^[a-z]+_[a-z]+_/, '');
        const leaked = (await recordedValues()).filter((value) => value.includes(key) || value.includes(secret) || value.includes(secret.slice(-16)));
        expect(leaked).toEqual([]);
      }),
      { numRuns: 150 },
    );
    // The property ran over real recordings: admitted and refused checks alike.
    expect(await t.sum('keyset.decisions', { 'keyset.outcome': 'allowed' })).toBeGreaterThan(0);
    expect(await t.sum('keyset.decisions', { 'keyset.outcome': 'invalid_api_key' })).toBeGreaterThan(0);
    expect(await t.sum('keyset.decisions', { 'keyset.outcome': 'api_key_in_query' })).toBeGreaterThan(0);
  });
});
