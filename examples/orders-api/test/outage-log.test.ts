/**
 * An outage writes no stack trace per refused request. The access line of
 * a keyset 5xx (`unavailable`) gives its cause as `name: message` text; core's failure log
 * writes the first failure with its stack, then a count per interval. A bug (any other
 * error) still logs its stack. End to end on a real PostgreSQL that stops accepting
 * connections (skips when none answers), and on `logRequest` itself.
 */
import { KeysetError, generateKey } from '@keyset/core';
import { postgresUrl } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { causeText, createLogger, logRequest } from '../src/logger.ts';
import { call, startApi, type TestApi } from './helpers.ts';

/** A JSON log line that carries a stack trace (an escaped newline, then `at `). */
const STACK = /\\n\s+at /;

describe('logRequest on a keyset 5xx', () => {
  it('gives the cause chain as text, no stack; a bug keeps its stack', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const driver = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const store = new KeysetError('unavailable', { detail: 'The key store is unavailable.', cause: driver });
    for (let i = 0; i < 100; i++) {
      logRequest(logger, { method: 'GET', url: '/api/orders', status: 503, durationMs: 1, error: new KeysetError('unavailable', { cause: store }) });
    }
    expect(lines).toHaveLength(100);
    expect(lines.filter((line) => STACK.test(line))).toEqual([]);
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({ msg: 'request failed', problem: 'unavailable', cause: 'KeysetError: The key store is unavailable. ← Error: connect ECONNREFUSED 127.0.0.1:5432' });
    expect(first.err).toBeUndefined();

    logRequest(logger, { method: 'GET', url: '/api/orders', status: 500, durationMs: 1, error: new TypeError('x is not a function') });
    expect(lines.at(-1)).toMatch(STACK);
  });

  it('causeText stops after two causes and cuts long messages', () => {
    const deep = new Error('a', { cause: new Error('b', { cause: new Error('c', { cause: new Error('d') }) }) });
    expect(causeText(deep)).toBe('Error: a ← Error: b ← Error: c');
    expect(causeText(new Error('x'.repeat(2000))).length).toBe(500);
    expect(causeText('plain text')).toBe('plain text');
  });
});

const serverUrl = await postgresUrl();

describe.skipIf(serverUrl === undefined)('a database outage of N requests', () => {
  const database = `orders_outage_log_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let t: TestApi;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    t = await startApi({ adapter: 'hono', databaseUrl: url.href, seedOrders: 20 });
  }, 60_000);

  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await t?.stop({ remove: true }).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('writes N access lines with the cause as text, and stack traces only in the few lines of core failure log', async () => {
    const N = 40;
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    const before = t.logs.length;
    for (let i = 0; i < N; i++) {
      // An unknown key each time: the cache cannot answer, so each request asks the store.
      const res = await call(t.api.url, '/api/orders?limit=5', { key: generateKey(t.api.config.keyPrefix) });
      expect(res.status).toBe(503);
    }
    const lines = t.logs.slice(before).map((line) => ({ line, json: JSON.parse(line) as Record<string, unknown> }));
    const access = lines.filter(({ json }) => (json.res as { statusCode?: number } | undefined)?.statusCode === 503);
    expect(access).toHaveLength(N);
    for (const { json } of access) {
      expect(json).toMatchObject({ msg: 'request failed', problem: 'unavailable', cause: expect.stringMatching(/^KeysetError: .+ ← /) });
      expect(json.err).toBeUndefined();
    }
    expect(access.filter(({ line }) => STACK.test(line))).toEqual([]);
    // Core's failure logs write only the first failure of each kind (operation, error name,
    // code) with its error and stack, never one per request. How many kinds an outage shows
    // depends on how the connection dies (refused, terminated, timed out) and on which part
    // first meets it, so the bound is against N: 40 requests, at most 10 such lines.
    expect(lines.filter(({ line }) => STACK.test(line)).length).toBeLessThanOrEqual(N / 4);
  }, 60_000);
});
