/**
 * In-flight limits on the example itself: two example processes (`src/main.ts`,
 * configured by environment as an operator would) on one PostgreSQL database and one Redis,
 * `OWNER_IN_FLIGHT_MAX=5`, one owner with three keys issued through the admin API.
 *
 * What makes a request slow, and how the handlers are counted: the test holds a lock on
 * the `orders` table (`LOCK TABLE … IN ACCESS EXCLUSIVE MODE`, what a migration or a
 * `VACUUM FULL` takes), so every admitted `GET /api/reports/daily` waits inside its
 * handler, in its query. PostgreSQL lists each waiting query in `pg_locks`: that is the
 * count of handlers at work, read from the database they work on, with no test code in
 * the example. While the lock is held no handler can finish, so the count only grows, and
 * reading it once every refused client has been refused again bounds the whole phase.
 *
 * 1. 40 concurrent requests over the three keys and both instances: never more than 5
 *    handlers at work, some refused with 429 `concurrency_limited` (they wait Retry-After
 *    and retry), all 40 answered 200.
 * 2. An instance killed (SIGKILL) with 5 leases held: the owner is refused until the first
 *    of those leases expires by Redis TIME, and admitted after, never before.
 *
 * Skips without PostgreSQL and Redis.
 */
import { readFileSync, rmSync } from 'node:fs';
import { postgresUrl, redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, stop, type Instance } from './instances.ts';
import { call, createDatabase, dropDatabase, tempDir } from './helpers.ts';

const pgUrl = await postgresUrl();
const redisAt = await redisUrl();
const OWNER_MAX = 5;


/**
 * Resolves once `condition()` holds, checking every 25 ms (an event, never a budget);
 * throws what `failure()` returns as soon as it returns something (a client's failed
 * assertion), so a wrong answer fails the test instead of leaving it waiting.
 */
async function until(condition: () => boolean | Promise<boolean>, failure: () => unknown = () => undefined): Promise<void> {
  while (!(await condition())) {
    const error = failure();
    if (error !== undefined) throw error;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(pgUrl === undefined || redisAt === undefined)('the example\'s in-flight limit across two instances (PostgreSQL + Redis)', () => {
  const run = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const database = `orders_api_inflight_${run}`;
  const dataDir = tempDir('orders-api-inflight-');
  const instances: Instance[] = [];
  let databaseUrl: string;
  let redis: Redis;
  /** The connection that holds the lock on `orders`, and reads `pg_locks`. */
  let lock: pg.Client;
  let admin: string | undefined;

  /** Report queries waiting in this database for the lock on `orders`: the handlers at work. */
  const handlersAtWork = async (): Promise<number> => {
    const { rows } = await lock.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks
       WHERE locktype = 'relation' AND NOT granted AND relation = 'orders'::regclass
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return rows[0]!.n;
  };
  const holdOrders = async () => {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
  };
  const releaseOrders = () => lock.query('COMMIT');

  /** Redis `TIME` in ms, the clock the lease store decides by. */
  const redisNow = async (): Promise<number> => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  /** Two instances (`adapters`) of the example with these in-flight settings. */
  const startPair = async (adapters: [string, string], leaseSeconds: number): Promise<[Instance, Instance]> => {
    const env = (adapter: string) => ({
      ADAPTER: adapter,
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisAt!,
      SEED_ORDERS: '50',
      CURSOR_SECRETS: 'c'.repeat(32),
      OWNER_IN_FLIGHT_MAX: String(OWNER_MAX),
      IN_FLIGHT_LEASE_SECONDS: String(leaseSeconds),
      // A report may wait on the test's lock for a while: no statement timeout under it.
      DATABASE_QUERY_TIMEOUT_MS: '0',
      LOG_LEVEL: 'info',
    });
    // One after the other: the first migrates, seeds and creates the admin key.
    const first = await startInstance(env(adapters[0]));
    instances.push(first);
    admin ??= readFileSync(`${dataDir}/admin.key`, 'utf8').trim();
    const second = await startInstance(env(adapters[1]));
    instances.push(second);
    return [first, second];
  };

  /** An owner and three keys of it (`reports:read`), through the admin API of `via`. */
  const issueOwnerKeys = async (via: Instance, tag: string): Promise<{ ownerId: string; keys: string[] }> => {
    const ownerId = `cus_${run}_${tag}`;
    const owner = await call(via.url, '/api/owners', { key: admin, method: 'POST', body: { id: ownerId } });
    expect(owner.status, owner.text).toBe(201);
    const keys: string[] = [];
    for (const name of ['export-a', 'export-b', 'export-c']) {
      const issued = await call(via.url, '/api/keys', { key: admin, method: 'POST', body: { name, scopes: ['reports:read'], ownerId } });
      expect(issued.status, issued.text).toBe(201);
      keys.push(issued.body.key as string);
    }
    return { ownerId, keys };
  };

  beforeAll(async () => {
    databaseUrl = await createDatabase(pgUrl!, database);
    redis = new Redis(redisAt!, { maxRetriesPerRequest: 1 });
    lock = new pg.Client({ connectionString: databaseUrl });
    await lock.connect();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stop(instance, 'SIGKILL')));
    await lock?.end().catch(() => undefined);
    const leaseSets = await redis?.keys(`keyset:inflight:{owner:cus_${run}_*}`);
    if (leaseSets !== undefined && leaseSets.length > 0) await redis.del(...leaseSets);
    redis?.disconnect();
    await dropDatabase(pgUrl!, database);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('40 concurrent slow requests, one owner, OWNER_IN_FLIGHT_MAX=5: never more than 5 handlers at work, all 40 answered', async () => {
    const pair = await startPair(['hono', 'express'], 300);
    const { ownerId, keys } = await issueOwnerKeys(pair[0], 'load');

    const TOTAL = 40;
    let answered = 0;
    let refusals = 0;
    const refusalsOf: Record<string, number> = {};
    const one = async (i: number): Promise<number> => {
      const origin = pair[i % 2]!.url;
      for (;;) {
        const res = await call(origin, '/api/reports/daily', { key: keys[i % 3] });
        if (res.status !== 429) {
          answered += 1;
          return res.status;
        }
        expect(res.body).toMatchObject({ code: 'concurrency_limited', limited: 'owner', max_in_flight: OWNER_MAX });
        refusals += 1;
        refusalsOf[origin] = (refusalsOf[origin] ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
      }
    };

    // Phases: hold the lock until the admitted handlers are all waiting in it and every
    // other client has been refused once more, count them, let them finish, again.
    const peaks: number[] = [];
    let requests: Promise<number[]> | undefined;
    let failed: unknown;
    const failure = () => failed;
    while (answered < TOTAL) {
      await holdOrders();
      if (requests === undefined) {
        requests = Promise.all(Array.from({ length: TOTAL }, (_, i) => one(i)));
        requests.catch((error: unknown) => (failed = error));
      }
      await until(async () => (await handlersAtWork()) >= Math.min(OWNER_MAX, TOTAL - answered), failure);
      const waiting = TOTAL - answered - Math.min(OWNER_MAX, TOTAL - answered);
      const refusedBefore = refusals;
      await until(() => refusals - refusedBefore >= waiting, failure);
      const atWork = await handlersAtWork();
      const leases = await redis.zcard(`keyset:inflight:{owner:${ownerId}}`);
      peaks.push(atWork);
      expect(atWork).toBeLessThanOrEqual(OWNER_MAX);
      expect(leases).toBeLessThanOrEqual(OWNER_MAX);
      const answeredBefore = answered;
      await releaseOrders();
      await until(() => answered >= answeredBefore + atWork, failure);
    }
    const statuses = await requests!;
    expect(statuses).toEqual(Array.from({ length: TOTAL }, () => 200));
    // The cap was reached, by requests through both instances, and some were refused.
    expect(Math.max(...peaks)).toBe(OWNER_MAX);
    expect(Object.keys(refusalsOf).sort()).toEqual(pair.map((instance) => instance.url).sort());
    expect(refusals).toBeGreaterThan(0);
    console.info(`in-flight load: peaks per phase ${peaks.join(', ')}; ${refusals} refusals (429 concurrency_limited)`);
    // Every lease went back.
    await until(async () => (await redis.zcard(`keyset:inflight:{owner:${ownerId}}`)) === 0);
    await Promise.all(pair.map((instance) => stop(instance)));
  }, 240_000);

  it('an instance killed with leases held: the owner is refused until the first lease expires, admitted after, never before', async () => {
    const LEASE_SECONDS = 20;
    const [doomed, survivor] = await startPair(['fastify', 'fetch'], LEASE_SECONDS);
    const { ownerId, keys } = await issueOwnerKeys(survivor, 'crash');
    const leaseSet = `keyset:inflight:{owner:${ownerId}}`;

    // Five requests at work on the doomed instance: all five of the owner's leases held there.
    await holdOrders();
    const held = Array.from({ length: OWNER_MAX }, (_, i) => call(doomed.url, '/api/reports/daily', { key: keys[i % 3] }).catch(() => undefined));
    await until(async () => (await handlersAtWork()) === OWNER_MAX);
    const withScores = await redis.zrange(leaseSet, '0', '-1', 'WITHSCORES');
    const expiries = withScores.filter((_, i) => i % 2 === 1).map(Number);
    expect(expiries).toHaveLength(OWNER_MAX);
    const firstExpiry = Math.min(...expiries);

    await stop(doomed, 'SIGKILL');
    await Promise.all(held);
    await releaseOrders();

    let refused = 0;
    for (let i = 0; ; i++) {
      const before = await redisNow();
      const res = await call(survivor.url, '/api/reports/daily', { key: keys[i % 3] });
      const after = await redisNow();
      if (res.status === 200) {
        // Admitted only once a lease of the dead instance had expired.
        expect(after).toBeGreaterThanOrEqual(firstExpiry);
        break;
      }
      expect(res.status, res.text).toBe(429);
      expect(res.body).toMatchObject({ code: 'concurrency_limited', limited: 'owner' });
      // Refused only while all five leases were live.
      expect(before).toBeLessThan(firstExpiry);
      refused += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(refused).toBeGreaterThan(0);
    console.info(`in-flight crash: refused ${refused} times until the dead instance's first lease expired (${LEASE_SECONDS} s lease)`);
  }, 240_000);
});
