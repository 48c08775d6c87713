/**
 * What `@keyset/opentelemetry` costs per guard check (warm key cache, memory stores, no
 * sockets): the guard as `createApiKeyGuard` makes it; the same through
 * `createKeysetTelemetry()` with no meter and no tracer (the wrappers hand back the objects
 * they were given, so this must be within noise of the first); with an SDK meter (a
 * `MeterProvider` whose reader is never collected during the run); and with the meter and
 * an SDK tracer that records every span (a processor that drops them, so no export cost
 * counts). The four run interleaved in one process: every round runs a batch of each, in an
 * order that reverses every other round, and each figure is the median over rounds of its
 * CPU µs per check minus the plain guard's in that round. CPU time
 * (`process.cpuUsage()`), so other processes on a shared machine do not count.
 *
 * Env: BENCH_ROUNDS (15), BENCH_BATCH (5000 checks per case per round), BENCH_KEYS (1000).
 * Smoke mode (BENCH_SMOKE=1): one round of 20 checks per case, 10 keys.
 *
 * Run: npx -y pnpm@10.34.9 bench telemetry
 */
import { createApiKeyGuard, createKeyAdmin, createKeyring, createMemoryKeyStore, createMemoryRateLimitStore, createRateLimiter, type ApiKeyGuard } from '@keyset/core';
import { createKeysetTelemetry, type KeysetTelemetry } from '@keyset/opentelemetry';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { save, setting } from './support.ts';
import { cpuNow } from './http/fake-node.ts';

const ROUNDS = setting('BENCH_ROUNDS', 15, 1);
const BATCH = setting('BENCH_BATCH', 5000, 20);
const KEYS = setting('BENCH_KEYS', 1000, 10);

class IdleReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
const dropSpans: SpanProcessor = { onStart() {}, onEnd() {}, forceFlush: () => Promise.resolve(), shutdown: () => Promise.resolve() };

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [dropSpans] });

/** One guard over its own keyring and limiter, wrapped by `telemetry` when given. */
async function guardCase(telemetry: KeysetTelemetry | undefined): Promise<{ guard: ApiKeyGuard; keys: string[] }> {
  const wrap = <T extends object>(name: string, store: T): T => telemetry?.store(name, store) ?? store;
  const keyring = createKeyring({ store: wrap('keys', createMemoryKeyStore()), prefix: 'acme_live', lastUsed: false, ...(telemetry === undefined ? {} : { onCacheLookup: telemetry.onCacheLookup }) });
  const limiter = createRateLimiter({
    defaultPolicy: { limit: 1_000_000_000, windowSeconds: 3600 },
    store: wrap('ratelimit', createMemoryRateLimitStore()),
    ...(telemetry === undefined ? {} : { onDecision: telemetry.onDecision() }),
  });
  const plain = createApiKeyGuard({ keyring: telemetry?.keyring(keyring) ?? keyring, limiter });
  const guard = telemetry?.guard(plain) ?? plain;
  const admin = createKeyAdmin(keyring);
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) keys.push((await admin.issue({ name: `k${i}`, scopes: ['orders:read'] })).key);
  return { guard, keys };
}

const cases = [
  { name: 'guard, no telemetry', ...(await guardCase(undefined)) },
  { name: 'createKeysetTelemetry() with no meter, no tracer', ...(await guardCase(createKeysetTelemetry())) },
  { name: 'SDK meter', ...(await guardCase(createKeysetTelemetry({ meter: meterProvider.getMeter('bench') }))) },
  { name: 'SDK meter + tracer', ...(await guardCase(createKeysetTelemetry({ meter: meterProvider.getMeter('bench'), tracer: tracerProvider.getTracer('bench') }))) },
];
const route = Object.freeze({ scopes: Object.freeze(['orders:read']), route: 'GET /api/orders' });

async function batch(c: (typeof cases)[number]): Promise<number> {
  const start = cpuNow();
  for (let n = 0; n < BATCH; n++) {
    const result = await c.guard.check({ authorization: `ApiKey ${c.keys[n % c.keys.length]}`, url: '/api/orders' }, route);
    result.release?.();
  }
  return (cpuNow() - start) / BATCH;
}

for (const c of cases) await batch(c); // warm: every key cached, every path compiled
const perRound: number[][] = cases.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i);
  const figures: number[] = [];
  for (const i of order) figures[i] = await batch(cases[i]!);
  cases.forEach((_, i) => perRound[i]!.push(figures[i]!));
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rows = cases.map((c, i) => ({
  case: c.name,
  cpuUsPerCheck: Number(median(perRound[i]!).toFixed(2)),
  addedUsPerCheck: Number(median(perRound[i]!.map((v, r) => v - perRound[0]![r]!)).toFixed(2)),
}));
console.table(rows);
save('telemetry', { rounds: ROUNDS, batch: BATCH, keys: KEYS, rows });
await meterProvider.shutdown();
await tracerProvider.shutdown();
