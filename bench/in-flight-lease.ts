/**
 * What an in-flight limit costs per request, in process: `guard.check` and the
 * lease given back, with warm caches and memory stores, for a guard without `concurrency`,
 * one with `concurrency` whose `max` leaves this key unlimited (null), a memory lease, and a
 * Redis lease (two round trips: take and give back). Rounds interleave the variants and the
 * median of CPU time per request is reported (process.cpuUsage, so waiting on Redis is not
 * counted for the in-process rows; the Redis row reports wall time per request instead).
 *
 * Run: TSX_TSCONFIG_PATH=tsconfig.json node --import tsx bench/in-flight-lease.ts
 * (ROUNDS, default 21; PER_ROUND, default 20000; BENCH_REDIS_URL, default redis://127.0.0.1:6379)
 */
import { createApiKeyGuard, createConcurrencyLimit, createKeyAdmin, createKeyring, createMemoryKeyStore, type ApiKeyGuard, type ConcurrencyOptions } from '@keyset/core';
import { createRedisConcurrencyStore } from '@keyset/redis';
import { Redis } from 'ioredis';

const rounds = Number(process.env.ROUNDS ?? 21);
const perRound = Number(process.env.PER_ROUND ?? 20_000);
const quiet = { warn() {}, error() {} };

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_live', lastUsed: false, logger: quiet });
const key = (await createKeyAdmin(keyring).issue({ name: 'bench', scopes: ['orders:read'] })).key;
const request = { authorization: `ApiKey ${key}`, url: '/api/orders', remoteAddress: '127.0.0.1' };
const checkOptions = Object.freeze({ scopes: Object.freeze(['orders:read']) });
const guardWith = (concurrency?: ConcurrencyOptions): ApiKeyGuard =>
  createApiKeyGuard({ keyring, refusedCredentials: false, ...(concurrency === undefined ? {} : { concurrency: createConcurrencyLimit(concurrency) }) });

const inProcess: [string, ApiKeyGuard][] = [
  ['no concurrency option', guardWith()],
  ['concurrency, max null for this key', guardWith({ max: () => null })],
  ['memory lease (max 100)', guardWith({ max: 100 })],
];
const samples = new Map<string, number[]>(inProcess.map(([name]) => [name, []]));
for (const [, guard] of inProcess) for (let i = 0; i < 2000; i += 1) (await guard.check(request, checkOptions)).release?.();
for (let round = 0; round < rounds; round += 1) {
  for (const [name, guard] of round % 2 === 0 ? inProcess : [...inProcess].reverse()) {
    const before = process.cpuUsage();
    for (let i = 0; i < perRound; i += 1) (await guard.check(request, checkOptions)).release?.();
    const used = process.cpuUsage(before);
    samples.get(name)!.push(((used.user + used.system) * 1000) / perRound);
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const base = median(samples.get('no concurrency option')!);
for (const [name, values] of samples) {
  const ns = median(values);
  console.log(`${name.padEnd(40)} ${(ns / 1000).toFixed(2)} us/request CPU  (${ns - base >= 0 ? '+' : ''}${((ns - base) / 1000).toFixed(2)} us)`);
}

const redis = new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const redisGuard = guardWith({ max: 100, store: createRedisConcurrencyStore({ redis, prefix: `keyset:bench:${process.pid}:` }) });
const plain = guardWith();
const wall: Record<string, number[]> = { 'no concurrency option': [], 'Redis lease (take + give back)': [] };
const n = Math.max(1, Math.floor(perRound / 10));
for (let round = 0; round < rounds; round += 1) {
  for (const [name, guard] of [['no concurrency option', plain], ['Redis lease (take + give back)', redisGuard]] as const) {
    const started = performance.now();
    for (let i = 0; i < n; i += 1) {
      const result = await guard.check(request, checkOptions);
      // Give back and wait for it, as the next request of a busy key would find it.
      result.release?.();
    }
    wall[name]!.push(((performance.now() - started) * 1000) / n);
  }
}
for (const [name, values] of Object.entries(wall)) console.log(`${name.padEnd(40)} ${median(values).toFixed(1)} us/request wall, sequential`);
redis.disconnect();
await keyring.close();
