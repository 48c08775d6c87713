/**
 * API-key verification cost: keyset's keyring with a warm cache (the common case), the
 * cold path (cache off, memory store), the early checksum refusal, and the full
 * `authenticate` with query check, header parsing and a scope — against two naive
 * baselines a hand-rolled middleware would use: a Map keyed by the raw key (stores keys
 * in plain text: the wrong design, shown as a floor) and SHA-256 hex + Map.
 *
 * Run: npx -y pnpm@10.34.9 bench keys
 */
import { createHash } from 'node:crypto';
import { createApiKeyGuard, createKeyAdmin, createKeyring, createMemoryKeyStore, createRateLimiter } from '@keyset/core';
import { compare, save, setting } from './support.ts';

const PREFIX = 'acme_live';
const N_KEYS = setting('BENCH_KEYS', 1000, 20);

const warm = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: { intervalMs: 60_000 } });
const cold = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, cache: false, lastUsed: false });
const limiter = createRateLimiter({ defaultPolicy: { limit: 100_000, windowSeconds: 1 }, logger: { warn() {} } });
const guard = createApiKeyGuard({ keyring: warm, limiter });

const warmKeys: string[] = [];
const coldKeys: string[] = [];
const rawMap = new Map<string, { id: string }>();
const digestMap = new Map<string, { id: string }>();
for (let i = 0; i < N_KEYS; i++) {
  const { key, record } = await createKeyAdmin(warm).issue({ name: `svc-${i}`, scopes: ['orders:read'] });
  warmKeys.push(key);
  coldKeys.push((await createKeyAdmin(cold).issue({ name: `svc-${i}`, scopes: ['orders:read'] })).key);
  rawMap.set(key, { id: record.id });
  digestMap.set(createHash('sha256').update(key).digest('hex'), { id: record.id });
}
for (const key of warmKeys) await warm.verify(key); // warm the cache
const badChecksum = warmKeys[0]!.slice(0, -1) + (warmKeys[0]!.endsWith('0') ? '1' : '0');

let i = 0;
const next = (keys: string[]): string => keys[i++ % N_KEYS]!;

const rows = await compare(`API-key verification, ${N_KEYS} keys round-robin`, 'naive: SHA-256 hex + Map', [
  { name: 'naive: Map by raw key (plaintext keys)', fn: () => rawMap.get(next(warmKeys)) },
  { name: 'naive: SHA-256 hex + Map', fn: () => digestMap.get(createHash('sha256').update(next(warmKeys)).digest('hex')) },
  { name: 'keyset verify, warm cache', fn: () => warm.verify(next(warmKeys)) },
  {
    name: 'keyset authenticate (query+header+scope), warm',
    fn: () => warm.authenticate({ authorization: `ApiKey ${next(warmKeys)}`, url: '/api/orders?limit=20' }, { scopes: ['orders:read'] }),
  },
  {
    name: 'keyset guard.check + memory GCRA, warm',
    fn: () => guard.check({ authorization: `ApiKey ${next(warmKeys)}`, url: '/api/orders?limit=20' }, { scopes: ['orders:read'] }),
  },
  { name: 'keyset verify, cold (no cache, memory store)', fn: () => cold.verify(next(coldKeys)) },
  { name: 'keyset verify, bad checksum (refused early)', fn: () => warm.verify(badChecksum).catch(() => undefined) },
]);

// A plain loop, without the harness: the figure the ≤ 3 µs target is about.
async function loop(label: string, n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let k = 0; k < Math.min(n, 10_000); k++) await fn();
  const start = process.hrtime.bigint();
  for (let k = 0; k < n; k++) await fn();
  const ns = Number(process.hrtime.bigint() - start) / n;
  console.log(`${label}: ${ns.toFixed(0)} ns/op (${n.toLocaleString('en-US')} sequential awaits)`);
  return ns;
}
const loops = {
  verifyWarmNs: await loop('keyset verify, warm cache', setting('BENCH_LOOP', 500_000, 100), () => warm.verify(next(warmKeys))),
  verifyColdNs: await loop('keyset verify, cold', setting('BENCH_LOOP', 200_000, 100), () => cold.verify(next(coldKeys))),
};
await warm.close();

save('keys', { rows, loops });
