/**
 * Store lookups one client address can force with checksum-valid unknown keys, before and
 * after the guard's budget of refused credentials: for each setting,
 * one client sends distinct keys through `guard.check`, CONCURRENCY at a time, for DURATION_MS,
 * against the PostgreSQL key store on a real server, and the store's findByDigest calls
 * are counted.
 *
 * Run: TSX_TSCONFIG_PATH=tsconfig.json node --import tsx bench/refused-credentials.ts
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; DURATION_MS, default 3000;
 * CONCURRENCY, default 16)
 */
import { createApiKeyGuard, createKeyring, generateKey, type ApiKeyGuardOptions, type KeyStore } from '@keyset/core';
import { createPostgresKeyStore, migrate } from '@keyset/postgres';
import pg from 'pg';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const durationMs = Number(process.env.DURATION_MS ?? 3000);
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const schema = `keyset_bench_refused_${process.pid}`;
const PREFIX = 'ks_live';
const quiet = { warn() {}, error() {} };

const pool = new pg.Pool({ connectionString: url, max: 10 });
await migrate(pool, { schema });
try {
  for (const [label, refusedCredentials] of [
    ['no budget (refusedCredentials: false)', false],
    ['default budget (60 per 60 s)', { logger: quiet }],
  ] as const) {
    const inner = createPostgresKeyStore({ client: pool, schema });
    let lookups = 0;
    const store: KeyStore = { ...inner, findByDigest: (digest) => (lookups++, inner.findByDigest(digest)) };
    const keyring = createKeyring({ store, prefix: PREFIX, lastUsed: false, logger: quiet });
    const guard = createApiKeyGuard({ keyring, refusedCredentials: refusedCredentials as NonNullable<ApiKeyGuardOptions['refusedCredentials']> });
    const statuses: Record<string, number> = {};
    let requests = 0;
    const started = performance.now();
    let firstSecondLookups = -1;
    const client = async (): Promise<void> => {
      while (performance.now() - started < durationMs) {
        if (firstSecondLookups < 0 && performance.now() - started >= 1000) firstSecondLookups = lookups;
        requests++;
        try {
          await guard.check({ authorization: `ApiKey ${generateKey(PREFIX)}`, url: '/api/orders', remoteAddress: '203.0.113.7' });
          statuses['200'] = (statuses['200'] ?? 0) + 1;
        } catch (error) {
          const code = (error as { code?: string }).code ?? 'error';
          statuses[code] = (statuses[code] ?? 0) + 1;
        }
        // A synchronous 429 would otherwise never yield to the other clients.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${label}: ${requests} requests in ${seconds.toFixed(1)} s (${Math.round(requests / seconds)}/s), ` +
        `${lookups} store lookups (${(lookups / seconds).toFixed(1)}/s; ${firstSecondLookups} in the first second, ` +
        `${((lookups - firstSecondLookups) / (seconds - 1)).toFixed(1)}/s after it), answers ${JSON.stringify(statuses)}`,
    );
  }
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
