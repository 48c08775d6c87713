/**
 * The usage routes' query, as a property: whatever `from`, `to`, `interval`, `by` and
 * `limit` hold, the handlers answer 200 with every bucket of the range (oldest first,
 * consecutive), or a 400 `invalid_request` naming one of those parameters: never another
 * error, never a store's ConfigError, never a 400 naming a parameter the client did not send.
 * A query without `from` is always answered: its default range fits the route's own cap.
 */
import { createKeyAdmin, createKeyring, createMemoryKeyStore, createMemoryUsageStore, isKeysetError } from '@keyset/core';
import { usageBucketCount, USAGE_INTERVAL_MS } from '@keyset/core/adapter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createUsageAdminHandlers, DEFAULT_USAGE_BUCKETS } from '../src/app/usage-admin.ts';

const NOW = Date.UTC(2030, 5, 15, 12, 34, 56, 789);
const DAY = 86_400_000;

const instant = fc.integer({ min: NOW - 500 * DAY, max: NOW + DAY }).map((ms) => new Date(ms).toISOString());
const value = (valid: fc.Arbitrary<string>) => fc.option(fc.oneof(valid, fc.string({ maxLength: 12 }), fc.constantFrom('', '2030-01-01', 'yesterday', '1e3', '-1')), { nil: undefined });

describe('usage queries', () => {
  it('answer the dense buckets of the range, or 400 invalid_request naming the parameter', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
    const { record } = await createKeyAdmin(keyring).issue({ name: 'k', scopes: [] });
    const handlers = createUsageAdminHandlers({ keyring, store: createMemoryUsageStore(), now: () => NOW });
    await fc.assert(
      fc.asyncProperty(
        value(instant),
        value(instant),
        value(fc.constantFrom('minute', 'hour', 'day')),
        value(fc.constantFrom('requests', 'refusals')),
        value(fc.integer({ min: -5, max: 150 }).map(String)),
        async (from, to, interval, by, limit) => {
          const query = new URLSearchParams();
          for (const [name, v] of Object.entries({ from, to, interval, by, limit })) if (v !== undefined) query.set(name, v);
          for (const call of [() => handlers.key(record.id, query), () => handlers.top(query)]) {
            try {
              const { status, body } = (await call()) as { status: number; body: { from: string; to: string; interval?: string; buckets?: { start: string }[] } };
              expect(status).toBe(200);
              if (body.buckets !== undefined) {
                const size = USAGE_INTERVAL_MS[body.interval as 'minute'];
                expect(body.buckets).toHaveLength(usageBucketCount(Date.parse(body.from), Date.parse(body.to), body.interval as 'minute'));
                body.buckets.forEach((b, i) => expect(Date.parse(b.start)).toBe(Date.parse(body.from) + i * size));
              }
            } catch (error) {
              if (!isKeysetError(error)) throw error;
              expect(error.code).toBe('invalid_request');
              expect(['from', 'to', 'interval', 'by', 'limit']).toContain(error.extensions.field);
              expect(query.has(error.extensions.field as string), `${String(error.extensions.field)} named, query ${query}`).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('without `from`, answer the default number of whole buckets at every interval and every instant, ending with the one in progress', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
    const { record } = await createKeyAdmin(keyring).issue({ name: 'k', scopes: [] });
    const store = createMemoryUsageStore();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: NOW - 500 * DAY, max: NOW + 500 * DAY }), fc.constantFrom('minute', 'hour', 'day' as const), fc.boolean(), async (now, interval, named) => {
        const handlers = createUsageAdminHandlers({ keyring, store, now: () => now });
        const query = new URLSearchParams(named || interval !== 'hour' ? { interval } : {});
        for (const call of [() => handlers.key(record.id, query), () => handlers.top(query)]) {
          const { status, body } = (await call()) as { status: number; body: { from: string; to: string; buckets?: { start: string }[] } };
          expect(status).toBe(200);
          expect(Date.parse(body.to)).toBe(now);
          const from = Date.parse(body.from);
          expect(usageBucketCount(from, now, interval)).toBe(DEFAULT_USAGE_BUCKETS[interval]);
          if (body.buckets !== undefined) {
            expect(body.buckets).toHaveLength(DEFAULT_USAGE_BUCKETS[interval]);
            const last = Date.parse(body.buckets.at(-1)!.start);
            expect(last < now && now <= last + USAGE_INTERVAL_MS[interval]).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
