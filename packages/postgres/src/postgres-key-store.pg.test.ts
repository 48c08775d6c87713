import { createServer } from 'node:net';
import type { KeyStore } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate } from './migrate.ts';
import { makeIdentity, makeSecret, mostLiveAtOnce, randomDigest } from './key-store-fixtures.test-support.ts';
import { describePostgresKeyStore } from './postgres-key-store.contract.ts';
import { ALL_VERSIONS, versions } from './postgres-migrate.contract.ts';
import { expectUnavailable, freshPrefix } from './postgres-fixtures.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_pg');

describe.skipIf(url === undefined)('node-postgres Pool on a real server', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    // A session time zone far from UTC (+05:45) and off the hour: timestamps must not shift.
    pool = new pg.Pool({ connectionString: url, max: 8, options: '-c TimeZone=Asia/Kathmandu' });
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  describePostgresKeyStore('PostgreSQL (pg Pool)', () => ({ client: pool, schema }));

  it('migrates concurrently from several pooled connections', async () => {
    const tablePrefix = freshPrefix();
    await Promise.all(Array.from({ length: 8 }, () => migrate(pool, { schema, tablePrefix })));
    expect(await versions(pool, schema, tablePrefix)).toEqual(ALL_VERSIONS);
  });

  // Every instance flushes its last-used times on its own timer, so flushes that name the
  // same hot keys meet on the primary. Each must lock its rows in one order (the digests'),
  // or two of them can wait on each other and PostgreSQL aborts one ("deadlock detected").
  // On a table of millions of keys a batch is joined by index, row after row in the order
  // the batch was grouped in; these connections are told to plan so on a small table too.
  const byIndex = (): pg.Pool => {
    const indexPool = new pg.Pool({ connectionString: url, max: 4, options: '-c enable_hashjoin=off -c enable_mergejoin=off' });
    cleanup.push(() => indexPool.end());
    return indexPool;
  };
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const end of cleanup) await end();
  });

  it('flushes last-used times from several instances at once without a deadlock', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const store = createPostgresKeyStore({ client: byIndex(), schema, tablePrefix });
    const digests = await issueKeys(store, 2000);
    const base = Date.parse('2031-01-01T00:00:00Z');
    const hot = digests.slice(0, 400);
    const failures: unknown[] = [];
    for (let round = 0; round < 100; round++) {
      // Four instances, each with a different share of the hot keys (so each batch is
      // grouped in a different order), all of them naming many of the same keys.
      const batches = [400, 300, 200, 120].map((size) => shuffled(hot).slice(0, size));
      const results = await Promise.allSettled(
        batches.map((batch, i) => store.touchLastUsed(batch.map((digest) => ({ digest, at: new Date(base + round * 10 + i) })))),
      );
      for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
    }
    expect(failures.map((error) => String((error as Error).cause ?? error))).toEqual([]);
    // Every hot key holds the latest time any batch gave it; the others were never touched.
    const { keys } = await store.listIdentities({ take: 2001 });
    const lastUsed = new Map(keys.map((key) => [key.secrets[0]?.digest, key.secrets[0]?.lastUsedAt?.getTime() ?? null]));
    expect(hot.every((digest) => (lastUsed.get(digest) ?? 0) >= base + 990)).toBe(true);
    expect(digests.slice(400).every((digest) => lastUsed.get(digest) === null)).toBe(true);
  });

  // During a pepper rotation each instance also re-hashes the keys it verifies, in
  // batches that name the same hot keys as the flushes: both must lock in one order.
  it('re-hashes digests while last-used times are flushed, without a deadlock', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const store = createPostgresKeyStore({ client: byIndex(), schema, tablePrefix });
    let hot = (await issueKeys(store, 2000)).slice(0, 400);
    const base = Date.parse('2031-01-01T00:00:00Z');
    const failures: unknown[] = [];
    for (let round = 0; round < 60; round++) {
      const moved = new Map(shuffled(hot).slice(0, 150).map((from) => [from, randomDigest()]));
      const flushes = [400, 300, 200].map((size, i) =>
        store.touchLastUsed(shuffled(hot).slice(0, size).map((digest) => ({ digest, at: new Date(base + round * 10 + i) }))),
      );
      const rehash = store.rehashDigests!([...moved].map(([from, to]) => ({ from, to, pepperId: 'pep_b' })));
      for (const result of await Promise.allSettled([...flushes, rehash])) if (result.status === 'rejected') failures.push(result.reason);
      hot = hot.map((digest) => moved.get(digest) ?? digest);
    }
    expect(failures.map((error) => String((error as Error).cause ?? error))).toEqual([]);
    // Every re-hash landed: each hot key is found under its latest digest.
    for (const digest of hot.slice(0, 50)) expect((await store.findByDigest(digest))?.secret.digest).toBe(digest);
  });

  // The race a single CTE statement loses: its snapshot predates the row-lock wait, so it
  // cannot see, and so never ends, a secret that a concurrent rotation just committed.
  it('ends every secret but one when rotations of one identity race', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const store = createPostgresKeyStore({ client: pool, schema, tablePrefix });
    const identity = makeIdentity();
    await store.insertIdentity(identity, makeSecret());
    const base = Date.parse('2030-01-01T00:00:00Z');
    const rotations = Array.from({ length: 8 }, (_, n) => ({ secret: makeSecret(), end: new Date(base + n * 1000) }));
    const results = await Promise.all(rotations.map(({ secret, end }) => store.addSecret(identity.id, secret, end)));
    expect(results.every(Boolean)).toBe(true);
    const key = await store.getIdentity(identity.id);
    expect(key?.secrets).toHaveLength(9);
    // Whatever the order the rotations ran in, exactly one secret (the last one) stays open.
    expect(key?.secrets.filter((s) => s.expiresAt === null)).toHaveLength(1);
    expect(key?.secrets[0]?.expiresAt).toBeNull();
    // …and at no instant do more than two secrets verify: the last one and the one it replaced.
    expect(mostLiveAtOnce(key?.secrets ?? [])).toBe(2);
    expect(key?.secrets.filter((s) => s.expiresAt === null || s.expiresAt.getTime() > s.createdAt.getTime())).toHaveLength(2);
  });

  it('never leaves a secret open when a rotation races a revocation', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const store = createPostgresKeyStore({ client: pool, schema, tablePrefix });
    for (let n = 0; n < 20; n += 1) {
      const identity = makeIdentity();
      await store.insertIdentity(identity, makeSecret());
      const fresh = makeSecret();
      const [added] = await Promise.all([store.addSecret(identity.id, fresh, new Date()), store.revoke(identity.id, new Date())]);
      const key = await store.getIdentity(identity.id);
      expect(key?.secrets.some((s) => s.digest === fresh.digest)).toBe(added);
      const revokedAt = key?.identity.revokedAt?.getTime() ?? Number.NaN;
      expect(key?.secrets.every((s) => s.expiresAt !== null && s.expiresAt.getTime() <= revokedAt)).toBe(true);
    }
  });
});

describe('unreachable database', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 1));
      });
    });
    pool = new pg.Pool({ host: '127.0.0.1', port, user: 'nobody', database: 'none', connectionTimeoutMillis: 500 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('rejects every method with KeysetError("unavailable") naming no digest', async () => {
    const store = createPostgresKeyStore({ client: pool });
    const digest = randomDigest();
    const secret = makeSecret({ digest });
    const calls: Promise<unknown>[] = [
      store.findByDigest(digest),
      store.insertIdentity(makeIdentity(), secret),
      store.addSecret('key_x', secret, new Date()),
      store.getIdentity('key_x'),
      store.listIdentities({ take: 2, withTotal: true }),
      store.revoke('key_x', new Date()),
      store.touchLastUsed([{ digest, at: new Date() }]),
      migrate(pool),
    ];
    for (const call of calls) {
      const error = expectUnavailable(await call.catch((e: unknown) => e), [digest]);
      expect(error.status).toBe(503);
    }
  });
});

/** Stores `count` keys, 100 at a time, and returns their digests in the order stored. */
async function issueKeys(store: KeyStore, count: number): Promise<string[]> {
  const digests: string[] = [];
  for (let n = 0; n < count; n += 100) {
    const chunk = Array.from({ length: Math.min(100, count - n) }, () => ({ identity: makeIdentity(), secret: makeSecret() }));
    await Promise.all(chunk.map(({ identity, secret }) => store.insertIdentity(identity, secret)));
    digests.push(...chunk.map((k) => k.secret.digest));
  }
  return digests;
}

/** A copy of `list` in random order (Fisher–Yates). */
function shuffled(list: readonly string[]): string[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
