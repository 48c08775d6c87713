/**
 * In-flight limits across instances (issue 25): two server processes share one key's
 * leases through Redis. 40 concurrent slow requests for a key with max 5: the handlers
 * never see more than 5 at work (counted by the handlers in Redis), and all 40 complete
 * (a refused client waits Retry-After and tries again). An instance killed (SIGKILL) with
 * leases held: the key is refused until those leases expire by Redis TIME, and admitted
 * after, never before. Skips without PostgreSQL and Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createKeyAdmin, createKeyring } from '@keyset/core';
import { createPostgresKeyStore, migrate } from '@keyset/postgres';
import { postgresUrl, redisUrl, uniqueSchema } from '@keyset/test-support';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const databaseUrl = await postgresUrl();
const redisAt = await redisUrl();
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const INSTANCE = fileURLToPath(new URL('./inflight-instance.ts', import.meta.url));

interface Instance {
  child: ChildProcess;
  origin: string;
  /** Resolves when the instance has printed `line`. */
  printed(line: string): Promise<void>;
}

function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', INSTANCE], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${ROOT}tsconfig.json`, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const waiters: { line: string; resolve: () => void }[] = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const w of waiters.filter((w) => out.includes(`${w.line}\n`))) w.resolve();
  });
  const printed = (line: string) =>
    new Promise<void>((resolve) => {
      if (out.includes(`${line}\n`)) resolve();
      else waiters.push({ line, resolve });
    });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`instance exited with ${code}: ${out}`)));
    const wait = () => {
      const port = /listening (\d+)\n/.exec(out)?.[1];
      if (port === undefined) return void child.stdout!.once('data', wait);
      resolve({ child, origin: `http://127.0.0.1:${port}`, printed });
    };
    wait();
  });
}

const stop = (instance: Instance | undefined) =>
  new Promise<void>((resolve) => {
    if (instance === undefined || instance.child.exitCode !== null || instance.child.signalCode !== null) return resolve();
    instance.child.once('exit', () => resolve());
    instance.child.kill('SIGKILL');
  });

describe.skipIf(databaseUrl === undefined || redisAt === undefined)('in-flight limit across two instances on Redis', () => {
  const schema = uniqueSchema('inflight');
  const run = `inflight_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let pool: pg.Pool;
  let redis: Redis;
  let key: string;
  const instances: Instance[] = [];

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    await migrate(pool, { schema });
    const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'inflight_test', lastUsed: false });
    key = (await createKeyAdmin(keyring).issue({ name: 'export jobs', scopes: [] })).key;
    await keyring.close();
    redis = new Redis(redisAt!, { maxRetriesPerRequest: 1 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map(stop));
    const keys = await redis?.keys(`*${run}*`);
    if (keys !== undefined && keys.length > 0) await redis.del(...keys);
    redis?.disconnect();
    await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool?.end();
  });

  const env = (max: number, leaseTtlSeconds: number, tag: string) => ({
    DATABASE_URL: databaseUrl!,
    REDIS_URL: redisAt!,
    INFLIGHT_SCHEMA: schema,
    INFLIGHT_RUN: `${run}_${tag}`,
    INFLIGHT_MAX: String(max),
    INFLIGHT_LEASE_TTL_SECONDS: String(leaseTtlSeconds),
  });
  const auth = () => ({ headers: { authorization: `ApiKey ${key}` } });

  it('40 concurrent slow requests, max 5: never more than 5 at work, all 40 complete', async () => {
    const pair = await Promise.all([startInstance(env(5, 60, 'load')), startInstance(env(5, 60, 'load'))]);
    instances.push(...pair);
    let refusals = 0;
    const one = async (i: number): Promise<number> => {
      const origin = (pair[i % 2] as Instance).origin;
      for (;;) {
        const res = await fetch(`${origin}/work?ms=200`, auth());
        const body = (await res.json()) as { code?: string };
        if (res.status !== 429) return res.status;
        expect(body.code).toBe('concurrency_limited');
        refusals += 1;
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
      }
    };
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => one(i)));
    expect(statuses).toEqual(Array.from({ length: 40 }, () => 200));
    const peak = Number(await redis.get(`${run}_load:peak`));
    expect(peak).toBeLessThanOrEqual(5);
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(refusals).toBeGreaterThan(0);
    expect(Number(await redis.get(`${run}_load:now`))).toBe(0);
    await Promise.all(pair.map(stop));
  }, 120_000);

  it('an instance killed with leases held: refused until the leases expire, admitted after, never before', async () => {
    const [doomed, survivor] = (await Promise.all([startInstance(env(2, 10, 'crash')), startInstance(env(2, 10, 'crash'))])) as [Instance, Instance];
    instances.push(doomed, survivor);
    // Two requests in flight on the doomed instance: both leases held.
    const held = [fetch(`${doomed.origin}/hold`, auth()).catch(() => undefined), fetch(`${doomed.origin}/hold`, auth()).catch(() => undefined)];
    await doomed.printed('holding 2');
    await stop(doomed);
    await Promise.all(held);
    // The lease set (a sorted set), read with its scores in one call. The lease time (10 s)
    // outlasts stopping an instance on a busy machine, so both leases are still there.
    const names = await redis.keys(`keyset:test:${run}_crash:*`);
    const types = await Promise.all(names.map((name) => redis.type(name)));
    const leaseKey = names.find((_, i) => types[i] === 'zset') as string;
    const withScores = await redis.zrange(leaseKey, '0', '-1', 'WITHSCORES');
    const scores = withScores.filter((_, i) => i % 2 === 1).map(Number);
    expect(scores).toHaveLength(2);
    const firstExpiry = Math.min(...scores);
    const lastExpiry = Math.max(...scores);
    const redisMs = async () => {
      const [s, us] = await redis.time();
      return Number(s) * 1000 + Math.floor(Number(us) / 1000);
    };
    let refused = 0;
    for (;;) {
      const before = await redisMs();
      const res = await fetch(`${survivor.origin}/work?ms=1`, auth());
      await res.arrayBuffer();
      const after = await redisMs();
      if (res.status === 200) {
        // Admitted only once a lease of the dead instance had expired.
        expect(after).toBeGreaterThanOrEqual(firstExpiry);
        break;
      }
      expect(res.status).toBe(429);
      // Refused only while both leases were live.
      expect(before).toBeLessThan(lastExpiry);
      refused += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refused).toBeGreaterThan(0);
  }, 120_000);
});
