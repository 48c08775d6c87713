/**
 * Pepper rotation on a real PostgreSQL server: 10,000 keys issued under
 * pepper A; the keyring then runs with peppers [B, A]; every key is used once. Afterwards
 * every digest is under B, no request failed, and the store saw exactly one lookup per
 * request, unknown keys included. Lookups are counted by a wrapper around the real pool.
 */
import { createKeyAdmin, createKeyring, digestKey, type Keyring } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { freshPrefix } from './postgres-fixtures.test-support.ts';
import type { Queryable } from './queryable.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_pepper');
const A = 'pepper-A-3f9c1e7a5b2d4c6e8f0a';
const B = 'pepper-B-7d2e4f6a8c0b1d3e5f7a';
const KEYS = 10_000;
const UNKNOWN = 500;
const CONCURRENCY = 16;

/** The real pool, with each statement counted by what it does. */
function countingClient(pool: pg.Pool): { client: Queryable; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const kind = (text: string): string => {
    if (/WHERE s\.digest = ANY\(/.test(text)) return 'lookup (findByDigests)';
    if (/WHERE s\.digest = \$1/.test(text)) return 'lookup (findByDigest)';
    if (/SET digest = v\.to_digest/.test(text)) return 'rehash';
    if (/SET last_used_at/.test(text)) return 'touchLastUsed';
    return 'other';
  };
  const client: Queryable = {
    query(text, params) {
      const name = kind(text);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return pool.query(text, params);
    },
  };
  return { client, counts };
}

/** Runs `task` over `items`, `CONCURRENCY` at a time. */
async function eachConcurrently<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

describe.skipIf(url === undefined)('pepper rotation on PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  it(`${KEYS} keys under pepper A, peppers [B, A], each key used once: all under B, one lookup per request`, { timeout: 600_000 }, async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const plain = createPostgresKeyStore({ client: pool, schema, tablePrefix });
    const underA = createKeyring({ store: plain, prefix: 'acme_live', pepper: A });
    const issued: string[] = [];
    const admin = createKeyAdmin(underA);
    await eachConcurrently(Array.from({ length: KEYS }, (_, n) => n), async (n) => {
      issued.push((await admin.issue({ name: `key ${n}`, scopes: ['orders:read'] })).key);
    });
    await underA.close();
    // Well-formed keys (checksum and all) issued by another keyring into other tables:
    // unknown here, so each one reaches the store.
    const elsewhere = freshPrefix();
    await migrate(pool, { schema, tablePrefix: elsewhere });
    const stranger = createKeyAdmin(createKeyring({ store: createPostgresKeyStore({ client: pool, schema, tablePrefix: elsewhere }), prefix: 'acme_live', pepper: A }));
    const unknown: string[] = [];
    await eachConcurrently(Array.from({ length: UNKNOWN }, (_, n) => n), async (n) => {
      unknown.push((await stranger.issue({ name: `stranger ${n}`, scopes: ['orders:read'] })).key);
    });

    const { client, counts } = countingClient(pool);
    const rotated: Keyring = createKeyring({ store: createPostgresKeyStore({ client, schema, tablePrefix }), prefix: 'acme_live', peppers: [B, A] });
    const rotatedAdmin = createKeyAdmin(rotated);
    const before = await rotatedAdmin.pepperCounts();
    const [idB, idA] = before.map((c) => c.pepperId);
    expect(before).toEqual([
      { pepperId: idB, pepper: 0, count: 0 },
      { pepperId: idA, pepper: 1, count: KEYS },
    ]);

    // Each issued key once, with an unknown key after every 20th; every request counted.
    const requests = issued.flatMap((key, n) => (n % 20 === 0 && n / 20 < UNKNOWN ? [key, unknown[n / 20]!] : [key]));
    let ok = 0;
    let refusedUnknown = 0;
    const failures: unknown[] = [];
    counts.clear();
    await eachConcurrently(requests, async (key) => {
      try {
        await rotated.authenticate({ authorization: `ApiKey ${key}`, url: '/api/orders' }, { scopes: ['orders:read'] });
        ok++;
      } catch (error) {
        if ((error as { reason?: string }).reason === 'unknown') refusedUnknown++;
        else failures.push(error);
      }
    });
    await rotated.close();
    expect(failures).toEqual([]);
    expect(ok).toBe(KEYS);
    expect(refusedUnknown).toBe(UNKNOWN);
    // One lookup per request, known or not, and no other way to look a key up.
    expect(counts.get('lookup (findByDigests)')).toBe(requests.length);
    expect(counts.get('lookup (findByDigest)')).toBeUndefined();
    console.log(`pepper rotation: ${requests.length} requests (${KEYS} keys under A, ${UNKNOWN} unknown), statements: ${JSON.stringify(Object.fromEntries(counts))}`);

    // Every digest is now B's, and each is the digest of its key under B.
    expect(await rotatedAdmin.pepperCounts()).toEqual([
      { pepperId: idB, pepper: 0, count: KEYS },
      { pepperId: idA, pepper: 1, count: 0 },
    ]);
    const underB = await Promise.all(issued.map((key) => digestKey(key, { pepper: B })));
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."${tablePrefix}secrets" WHERE digest = ANY($1::text[]) AND pepper_id = $2`, [underB, idB]);
    expect(rows[0].n).toBe(KEYS);

    // Pepper A can go: a keyring with B alone verifies every key, with one lookup each.
    const { client: second, counts: secondCounts } = countingClient(pool);
    const onlyB = createKeyring({ store: createPostgresKeyStore({ client: second, schema, tablePrefix }), prefix: 'acme_live', pepper: B });
    let okB = 0;
    await eachConcurrently(issued, async (key) => {
      await onlyB.verify(key);
      okB++;
    });
    await onlyB.close();
    expect(okB).toBe(KEYS);
    expect(secondCounts.get('lookup (findByDigest)')).toBe(KEYS);

    // Rotating a key stores its new secret's pepper id (the 8-argument rotation).
    const onlyBAdmin = createKeyAdmin(onlyB);
    const { record } = await onlyBAdmin.issue({ name: 'to rotate', scopes: [] });
    const rotatedKey = await onlyBAdmin.rotate(record.id, { overlapSeconds: 0 });
    const secret = await pool.query(`SELECT pepper_id FROM "${schema}"."${tablePrefix}secrets" WHERE digest = $1`, [await digestKey(rotatedKey.key, { pepper: B })]);
    expect(secret.rows).toEqual([{ pepper_id: idB }]);
  });
});
