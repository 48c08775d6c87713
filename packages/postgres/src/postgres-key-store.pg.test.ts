import { createServer } from 'node:net';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate } from './migrate.ts';
import { makeIdentity, makeSecret, mostLiveAtOnce, randomDigest } from './key-store.contract.ts';
import {
  ALL_VERSIONS,
  describePostgresKeyStore,
  expectUnavailable,
  freshPrefix,
  versions,
} from './postgres-key-store.contract.ts';

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
