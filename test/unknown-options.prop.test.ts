/**
 * Options checked at run time, for every function of every package that takes an options
 * object at start-up (docs/errors.md, "Configuration errors").
 *
 * Properties, per function:
 * - any misspelling of any option name it knows, at any depth (a character inserted,
 *   deleted, substituted, two swapped, a letter's case changed, or the whole name's), that
 *   is not itself a name known there, is refused with a `ConfigError` (`TypeError` for
 *   `@keyset/client`, which depends on nothing) naming it with its path and suggesting a
 *   known name;
 * - any valid options object (the fullest one, with any optional names left out, at any
 *   depth) is accepted.
 *
 * Servers are real: PostgreSQL and Redis where a store, a bus or a query builder's
 * `countRows` needs one.
 */
import {
  ConfigError,
  createApiKeyGuard,
  createCursorCodec,
  createClientAddressResolver,
  createConcurrencyLimit,
  createKeyAdmin,
  createKeyring,
  createLeakAlertHandler,
  createMemoryConcurrencyStore,
  createMemoryAuditStore,
  createMemoryKeyStore,
  createOwnerAdmin,
  createRoleAdmin,
  createMemoryQuotaStore,
  createMemoryRateLimitStore,
  createMemoryUsageStore,
  createPaginator,
  createRateLimiter,
  createUsageCounter,
  cursorSecrets,
  defineSortSpec,
  digestKey,
  generateKey,
  webCrypto,
  type SortKey,
} from '@keyset/core';
import { createLimitPolicy, createRevocationProtocol, createSortParam } from '@keyset/core/adapter';
import * as client from '@keyset/client';
import * as drizzle from '@keyset/drizzle';
import * as express from '@keyset/express';
import * as fastify from '@keyset/fastify';
import * as fetchAdapter from '@keyset/fetch';
import * as hono from '@keyset/hono';
import * as kysely from '@keyset/kysely';
import * as openapi from '@keyset/openapi';
import * as prismaPages from '@keyset/prisma';
import * as graphqlKeys from '@keyset/graphql';
import { createPostgresAuditStore, createPostgresKeyStore, createPostgresQuotaStore, createPostgresRevocationBus, createPostgresUsageStore, migrate, migrationSql } from '@keyset/postgres';
import { createRedisConcurrencyStore, createRedisQuotaStore, createRedisRateLimitStore, createRedisRequestStore, createRevocationBus } from '@keyset/redis';
import { PrismaPg } from '@prisma/adapter-pg';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { integer, pgTable } from 'drizzle-orm/pg-core';
import { createKeysetTelemetry } from '@keyset/opentelemetry';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient } from '../packages/prisma/src/testing/generated/postgres/client.ts';

const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = 'a-cursor-secret-of-at-least-32-bytes!';

type Options = Record<string, unknown>;

interface Fixture {
  /** The function as the message names it, and the test's title. */
  name: string;
  /** The fullest valid options: every name the function knows (one member of a union). */
  valid: () => Options;
  /** Paths whose values hold option names (top level always): `cursor`, `sort[]`, `sort[].nullable`. */
  nested?: readonly string[];
  /** Paths that must stay for the options to be valid. */
  required?: readonly string[];
  /** Names known at a path besides those `valid` holds (the other members of a union). */
  alsoKnown?: Readonly<Record<string, readonly string[]>>;
  /** Calls the function; a promise is awaited. Returns what `dispose` ends. */
  run: (options: Options) => unknown;
  dispose?: (made: never) => unknown;
  /** Path before the names in messages, when the function is given one object of several. */
  prefix?: string;
  error?: typeof ConfigError | typeof TypeError;
  /** Runs of the acceptance property (server-bound fixtures take fewer). */
  validRuns?: number;
}

/** One place an option name stands: the object holding it, the name, its path in messages. */
interface Site {
  path: readonly (string | number)[];
  name: string;
  shown: string;
  known: ReadonlySet<string>;
}

const isObject = (value: unknown): value is Options => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every site of an option name in `options`, nested paths included. */
function sitesOf(fixture: Fixture, options: Options): Site[] {
  const sites: Site[] = [];
  const visit = (value: Options, path: (string | number)[], pattern: string, shown: string): void => {
    const known = new Set([...Object.keys(value), ...(fixture.alsoKnown?.[pattern] ?? [])]);
    for (const name of Object.keys(value)) {
      sites.push({ path, name, shown: shown + name, known });
      const childPattern = pattern === '' ? name : `${pattern}.${name}`;
      const child = value[name];
      if (fixture.nested?.includes(childPattern) && isObject(child)) visit(child, [...path, name], childPattern, `${shown}${name}.`);
      if (fixture.nested?.includes(`${childPattern}[]`) && Array.isArray(child)) {
        child.forEach((element, i) => {
          if (isObject(element)) visit(element, [...path, name, i], `${childPattern}[]`, `${shown}${name}[${i}].`);
        });
      }
    }
  };
  visit(options, [], '', fixture.prefix ?? '');
  return sites;
}

function at(options: Options, path: readonly (string | number)[]): Options {
  return path.reduce<Options>((value, step) => (value as Record<string | number, unknown>)[step] as Options, options);
}

/** Renames `from` to `to` in place, as an own property (`__proto__` included). */
function rename(target: Options, from: string, to: string): void {
  const value = target[from];
  delete target[from];
  Object.defineProperty(target, to, { value, enumerable: true, writable: true, configurable: true });
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
const swapCase = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/** One edit of `name`; `where` and `letter` pick the position and the character. */
function misspell(name: string, kind: number, where: number, letter: string): string {
  const i = name.length === 0 ? 0 : where % name.length;
  switch (kind) {
    case 0: // insert
      return name.slice(0, where % (name.length + 1)) + letter + name.slice(where % (name.length + 1));
    case 1: // delete
      return name.slice(0, i) + name.slice(i + 1);
    case 2: // substitute
      return name.slice(0, i) + letter + name.slice(i + 1);
    case 3: // transpose
      return i + 1 < name.length ? name.slice(0, i) + name[i + 1] + name[i] + name.slice(i + 2) : name;
    case 4: // one letter's case
      return name.slice(0, i) + swapCase(name[i] ?? '') + name.slice(i + 1);
    default: // the whole name's case
      return name === name.toLowerCase() ? name.toUpperCase() : name.toLowerCase();
  }
}

/** `options` with every optional name at every nested depth kept or left out by `keep`. */
function subset(fixture: Fixture, options: Options, keep: () => boolean): Options {
  const required = new Set(fixture.required ?? []);
  const prune = (value: Options, pattern: string): void => {
    for (const name of Object.keys(value)) {
      const childPattern = pattern === '' ? name : `${pattern}.${name}`;
      if (!required.has(childPattern) && !keep()) {
        delete value[name];
        continue;
      }
      const child = value[name];
      if (fixture.nested?.includes(childPattern) && isObject(child)) prune(child, childPattern);
      if (fixture.nested?.includes(`${childPattern}[]`) && Array.isArray(child)) {
        for (const element of child) if (isObject(element)) prune(element, `${childPattern}[]`);
      }
    }
  };
  prune(options, '');
  return options;
}

async function outcome(fixture: Fixture, options: Options): Promise<{ made?: unknown; error?: unknown }> {
  try {
    return { made: await fixture.run(options) };
  } catch (error) {
    return { error };
  }
}

// ---------------------------------------------------------------------------------------
// Servers and shared parts

let pool: pg.Pool;
let listener: pg.Client;
let redis: Redis;
let subscriber: Redis;
let kdb: Kysely<{ keyset_options_test: { id: number } }>;
let ddb: ReturnType<typeof drizzlePg>;
let prisma: PrismaClient;
const PRISMA_SCHEMA = `keyset_options_prisma_${process.pid}`;
const table = pgTable('keyset_options_test', { id: integer('id').primaryKey() });

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  listener = new pg.Client({ connectionString: POSTGRES_URL });
  await listener.connect();
  redis = new Redis(REDIS_URL, { lazyConnect: true });
  subscriber = new Redis(REDIS_URL, { lazyConnect: true });
  await Promise.all([redis.connect(), subscriber.connect()]);
  await pool.query('CREATE TABLE IF NOT EXISTS keyset_options_test (id integer PRIMARY KEY); INSERT INTO keyset_options_test VALUES (1), (2), (3) ON CONFLICT DO NOTHING');
  kdb = new Kysely({ dialect: new PostgresDialect({ pool }) });
  ddb = drizzlePg(pool);
  await pool.query(`CREATE SCHEMA ${PRISMA_SCHEMA}; CREATE TABLE ${PRISMA_SCHEMA}.items (id bigint PRIMARY KEY, tenant int NOT NULL, created_at timestamptz NOT NULL, grp int NOT NULL, score numeric, label text, flag boolean NOT NULL)`);
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: POSTGRES_URL, max: 1 }, { schema: PRISMA_SCHEMA }) });
}, 60_000);

afterAll(async () => {
  await listener?.end();
  await pool?.query(`DROP SCHEMA IF EXISTS ${PRISMA_SCHEMA} CASCADE`);
  await prisma?.$disconnect();
  await pool?.query('DROP SCHEMA IF EXISTS keyset_options_test CASCADE; DROP TABLE IF EXISTS keyset_options_test');
  // Kysely's destroy ends the pool it was given.
  await kdb?.destroy();
  redis?.disconnect();
  subscriber?.disconnect();
});

const keyring = () => createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', lastUsed: false });
const limiter = () => createRateLimiter({ defaultPolicy: { limit: 10, windowSeconds: 1 } });
const sort = (): SortKey[] => [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp', nullable: { nulls: 'last' }, unique: false },
  { key: 'id', column: 'id', dir: 'desc', type: 'int', nullable: false, unique: true },
];
const paginator = () => createPaginator({ endpoint: 'GET /things', sort: sort(), cursor: { secrets: [SECRET] } });
const bareLogger = () => ({ warn() {}, error() {} });
const handler = () => new Response('ok');
const onePage = async () => new Response(JSON.stringify({ items: [1], nextCursor: null }), { headers: { 'content-type': 'application/json' } });
const close = (made: { close(): unknown }) => made.close();

const ADAPTERS = { hono, express, fastify } as const;

const FIXTURES: Fixture[] = [
  // @keyset/core
  {
    name: 'createKeyring',
    valid: () => ({
      store: createMemoryKeyStore(),
      prefix: 'acme_live',
      pepper: 'a-pepper-of-at-least-16-bytes',
      cache: { max: 10, ttlMs: 1000, negativeTtlMs: 100, negativeMax: 10 },
      lastUsed: { intervalMs: 60_000 },
      scopeWildcards: true,
      realm: 'api',
      clock: () => Date.now(),
      crypto: webCrypto,
      logger: bareLogger(),
      onCacheLookup: () => {},
    }),
    nested: ['cache', 'lastUsed'],
    required: ['store', 'prefix'],
    run: (o) => createKeyring(o as never),
    dispose: close,
  },
  { name: 'createKeyAdmin', valid: () => ({ actor: 'billing-job' }), run: (o) => createKeyAdmin(keyring(), o as never) },
  { name: 'createOwnerAdmin', valid: () => ({ actor: 'billing-job' }), run: (o) => createOwnerAdmin(keyring(), o as never) },
  { name: 'createMemoryKeyStore', valid: () => ({ audit: createMemoryAuditStore() }), run: (o) => createMemoryKeyStore(o as never) },
  {
    name: 'createApiKeyGuard',
    valid: () => ({
      keyring: keyring(),
      limiter: limiter(),
      realm: 'api',
      trustProxy: { hops: 1 },
      refusedCredentials: { limit: 60, windowSeconds: 60, store: createMemoryRateLimitStore(), maxTracked: 1000, clock: () => Date.now(), logger: bareLogger() },
      concurrency: createConcurrencyLimit({ max: 5 }),
    }),
    nested: ['trustProxy', 'refusedCredentials'],
    required: ['keyring', 'trustProxy.hops'],
    alsoKnown: { trustProxy: ['cidrs'] },
    run: (o) => createApiKeyGuard(o as never),
  },
  {
    name: 'createPaginator',
    valid: () => ({
      endpoint: 'GET /things',
      sort: sort(),
      sortable: [{ name: 'amount', column: 'amount_cents', type: 'int', nullable: { nulls: 'first' }, unique: false }],
      limits: { default: 10, max: 50, overMax: 'clamp', maxOffset: 10_000 },
      defaultMode: 'cursor',
      modes: ['cursor', 'offset'],
      filters: () => ({}),
      total: { mode: 'exact', cap: 1000 },
      cursor: { secrets: [SECRET], ttlSeconds: 3600, clockSkewSeconds: 30, maxLength: 2048 },
      crypto: webCrypto,
      clock: () => Date.now(),
    }),
    nested: ['sort[]', 'sort[].nullable', 'sortable[]', 'sortable[].nullable', 'limits', 'total', 'cursor'],
    required: ['endpoint', 'sort', 'sort[].key', 'sort[].dir', 'sort[].type', 'sort[].unique', 'sort[].nullable.nulls', 'sortable[].name', 'sortable[].type', 'sortable[].nullable.nulls', 'total.mode', 'cursor', 'cursor.secrets'],
    run: (o) => createPaginator(o as never),
  },
  {
    name: 'createCursorCodec',
    valid: () => ({ secrets: [SECRET], ttlSeconds: 60, clockSkewSeconds: 30, maxLength: 1024, crypto: webCrypto, clock: () => Date.now() }),
    required: ['secrets'],
    run: (o) => createCursorCodec(o as never),
  },
  {
    name: 'createRateLimiter',
    valid: () => ({
      store: createMemoryRateLimitStore(),
      defaultPolicy: [{ limit: 10, windowSeconds: 1, burst: 5, name: 'default' }],
      quotaStore: createMemoryQuotaStore(),
      refusalMemory: 100,
      headers: 'draft-11',
      onDecision: () => {},
      onStoreError: 'local',
      timeoutMs: 100,
      retryIntervalMs: 100,
      clock: () => Date.now(),
      logger: bareLogger(),
    }),
    nested: ['defaultPolicy[]'],
    required: ['defaultPolicy', 'defaultPolicy[].limit', 'defaultPolicy[].windowSeconds'],
    run: (o) => createRateLimiter(o as never),
  },
  {
    name: 'createConcurrencyLimit',
    valid: () => ({ max: 5, ownerMax: 20, store: createMemoryConcurrencyStore(), leaseTtlSeconds: 60, retryAfterSeconds: 1, onStoreError: 'closed' }),
    required: ['max'],
    run: (o) => createConcurrencyLimit(o as never),
  },
  { name: 'createMemoryConcurrencyStore', valid: () => ({ clock: () => Date.now() }), run: (o) => createMemoryConcurrencyStore(o as never) },
  {
    name: 'createLeakAlertHandler',
    valid: () => {
      const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live' });
      return {
        keyring,
        admin: createKeyAdmin(keyring),
        publicKeys: { fetch: async () => [] },
        policy: 'mark',
        onLeak: () => {},
        maxBodyBytes: 1024,
        replayWindowSeconds: 60,
        maxRememberedAlerts: 100,
        minKeyRefreshSeconds: 60,
        logger: { info: () => {} },
        clock: () => Date.now(),
      };
    },
    required: ['keyring', 'admin', 'publicKeys'],
    run: (o) => createLeakAlertHandler(o as never),
  },
  {
    name: 'createMemoryRateLimitStore',
    valid: () => ({ max: 100, clock: () => Date.now() }),
    run: (o) => createMemoryRateLimitStore(o as never),
  },
  {
    name: 'digestKey',
    valid: () => ({ pepper: 'a-pepper-of-at-least-16-bytes', crypto: webCrypto }),
    run: (o) => digestKey(generateKey('acme_live'), o as never),
  },
  { name: 'generateKey', valid: () => ({ crypto: webCrypto }), run: (o) => generateKey('acme_live', o as never) },
  { name: 'cursorSecrets', valid: () => ({ development: false, name: 'CURSOR_SECRET' }), run: (o) => cursorSecrets(SECRET, o as never) },
  {
    name: 'createLimitPolicy',
    valid: () => ({ default: 10, max: 50, overMax: 'reject', maxOffset: 10_000 }),
    run: (o) => createLimitPolicy(o as never),
  },
  {
    name: 'createRevocationProtocol',
    valid: () => ({ invalidate: () => {}, sendAck: async () => 1, ackTimeoutMs: 10, logger: bareLogger() }),
    required: ['invalidate', 'sendAck'],
    run: (o) => createRevocationProtocol(o as never),
  },
  {
    name: 'defineSortSpec',
    prefix: 'sort[0].',
    valid: () => sort()[0] as unknown as Options,
    nested: ['nullable'],
    required: ['key', 'dir', 'type', 'nullable.nulls'],
    run: (o) => defineSortSpec([o as never, sort()[1]!]),
  },
  {
    name: 'createSortParam',
    prefix: 'sortable[0].',
    valid: () => ({ name: 'amount', column: 'amount_cents', type: 'int', nullable: { nulls: 'last' }, unique: false }),
    nested: ['nullable'],
    required: ['name', 'type', 'nullable.nulls'],
    run: (o) => createSortParam([o as never], defineSortSpec(sort())),
  },
  {
    name: 'createClientAddressResolver',
    prefix: 'trustProxy.',
    valid: () => ({ cidrs: ['10.0.0.0/8'] }),
    required: ['cidrs'],
    alsoKnown: { '': ['hops'] },
    run: (o) => createClientAddressResolver(o as never),
  },

  // Adapters
  ...(Object.entries(ADAPTERS) as [string, typeof hono][]).flatMap(([adapter, a]): Fixture[] => [
    {
      name: `${adapter} apiKey`,
      valid: () => ({ guard: createApiKeyGuard({ keyring: keyring() }), scopes: ['orders:read'], cost: 1, route: 'GET /things', clientAddress: () => undefined }),
      required: ['guard'],
      run: (o) => a.apiKey(o as never),
    },
    { name: `${adapter} paginate`, valid: () => ({ filters: () => ({}), baseUrl: 'https://api.example.com' }), run: (o) => a.paginate(paginator(), o as never) },
    { name: `${adapter} problemHandler`, valid: () => ({ onError: () => {}, typeBase: 'https://example.com/problems/' }), run: (o) => a.problemHandler(o as never) },
  ]),
  { name: 'createRoleAdmin', valid: () => ({ actor: 'billing-job' }), run: (o) => createRoleAdmin(keyring(), o as never) },
  {
    name: 'graphql useApiKey',
    valid: () => ({ guard: createApiKeyGuard({ keyring: keyring() }), scopes: ['orders:read'], fieldScopes: { 'Query.orders': ['orders:read'] }, cost: 1, route: 'POST /graphql', clientAddress: () => undefined }),
    required: ['guard'],
    run: (o) => graphqlKeys.useApiKey(o as never),
  },
  {
    name: 'graphql apolloApiKeyContext',
    valid: () => ({ guard: createApiKeyGuard({ keyring: keyring() }), scopes: ['orders:read'], cost: 1, route: 'POST /graphql' }),
    required: ['guard'],
    run: (o) => graphqlKeys.apolloApiKeyContext(o as never),
  },
  {
    name: 'graphql apolloFieldScopes',
    valid: () => ({ fieldScopes: { 'Query.orders': ['orders:read'], Mutation: ['orders:write'] } }),
    required: ['fieldScopes'],
    run: (o) => graphqlKeys.apolloFieldScopes(o as never),
  },
  { name: 'opentelemetry createKeysetTelemetry', valid: () => ({ meter: 'global', tracer: 'global', ownerAttribute: true }), run: (o) => createKeysetTelemetry(o as never) },
  { name: 'hono notFoundHandler', valid: () => ({ typeBase: 'urn:x:', app: { routes: [], router: { match: () => [[], []] } } }), run: (o) => hono.notFoundHandler(o as never) },
  { name: 'express notFoundHandler', valid: () => ({ routes: [{ method: 'GET', path: '/things/:id' }], typeBase: 'urn:x:' }), run: (o) => express.notFoundHandler(o as never) },
  { name: 'fastify notFoundHandler', valid: () => ({ typeBase: 'urn:x:' }), run: (o) => fastify.notFoundHandler(o as never) },
  {
    name: 'fetch apiKey',
    valid: () => ({ guard: createApiKeyGuard({ keyring: keyring() }), scopes: ['orders:read'], cost: 1, route: 'GET /things', clientAddress: () => undefined }),
    required: ['guard'],
    run: (o) => fetchAdapter.apiKey(o as never)(handler),
  },
  {
    name: 'fetch paginate',
    valid: () => ({ filters: () => ({ status: 'paid' }), baseUrl: 'https://api.example.com' }),
    run: (o) => fetchAdapter.paginate(new Request('https://api.example.com/things'), paginator(), o as never),
  },
  { name: 'fetch problemHandler', valid: () => ({ onError: () => {}, typeBase: 'urn:x:' }), run: (o) => fetchAdapter.problemHandler(o as never)(handler) },
  { name: 'fetch notFoundHandler', valid: () => ({ typeBase: 'urn:x:', allowedMethods: () => ['GET'] }), run: (o) => fetchAdapter.notFoundHandler(o as never) },
  { name: 'fetch problemResponse', valid: () => ({ request: new Request('https://x.example/'), typeBase: 'urn:x:' }), run: (o) => fetchAdapter.problemResponse(new Error('x'), o as never) },

  // Stores and buses (real PostgreSQL and Redis)
  {
    name: 'createPostgresKeyStore',
    valid: () => ({ client: pool, schema: 'public', tablePrefix: 'keyset_' }),
    required: ['client'],
    run: (o) => createPostgresKeyStore(o as never),
  },
  {
    name: 'createPostgresAuditStore',
    valid: () => ({ client: pool, schema: 'public', tablePrefix: 'keyset_' }),
    required: ['client'],
    run: (o) => createPostgresAuditStore(o as never),
  },
  {
    name: 'createPostgresQuotaStore',
    valid: () => ({ client: pool, schema: 'public', tablePrefix: 'keyset_' }),
    required: ['client'],
    run: (o) => createPostgresQuotaStore(o as never),
  },
  {
    name: 'createPostgresUsageStore',
    valid: () => ({ client: pool, schema: 'public', tablePrefix: 'keyset_', retention: { minute: 2, hour: 90, day: 730 } }),
    nested: ['retention'],
    required: ['client'],
    run: (o) => createPostgresUsageStore(o as never),
  },
  { name: 'createMemoryUsageStore', valid: () => ({ retention: { minute: 2, hour: 90, day: 730 } }), nested: ['retention'], run: (o) => createMemoryUsageStore(o as never) },
  {
    name: 'createUsageCounter',
    valid: () => ({ store: createMemoryUsageStore(), flushIntervalMs: 5000, pruneIntervalMs: 3_600_000, maxPendingKeys: 1000, clock: () => Date.now(), logger: bareLogger(), onFlush: () => {} }),
    required: ['store'],
    run: (o) => createUsageCounter(o as never),
    dispose: close,
  },
  { name: 'migrationSql', valid: () => ({ schema: 'auth', tablePrefix: 'api_' }), run: (o) => migrationSql(o as never) },
  {
    name: 'migrate',
    valid: () => ({ schema: 'keyset_options_test', tablePrefix: 'k_' }),
    // Accepted options run the migration (idempotent); the check comes before any statement.
    run: (o) => migrate(pool, o as never),
    validRuns: 5,
  },
  {
    name: 'createPostgresRevocationBus',
    valid: () => ({
      client: pool,
      listener,
      keyring: keyring(),
      channel: 'keyset_options_test',
      publishOnChange: true,
      timeoutMs: 2000,
      ackTimeoutMs: 10,
      logger: bareLogger(),
    }),
    required: ['client', 'listener', 'keyring'],
    alsoKnown: { '': ['connectListener'] },
    run: async (o) => {
      const bus = createPostgresRevocationBus(o as never);
      await bus.ready;
      return bus;
    },
    dispose: close,
    validRuns: 8,
  },
  {
    name: 'createRedisRateLimitStore',
    valid: () => ({ redis, prefix: 'keyset-options-test:', timeoutMs: 500 }),
    required: ['redis'],
    run: (o) => createRedisRateLimitStore(o as never),
  },
  {
    name: 'createRedisConcurrencyStore',
    valid: () => ({ redis, prefix: 'keyset-options-test:', timeoutMs: 500 }),
    required: ['redis'],
    run: (o) => createRedisConcurrencyStore(o as never),
  },
  {
    name: 'createRedisQuotaStore',
    valid: () => ({ redis, prefix: 'keyset-options-test:', timeoutMs: 500, durable: createPostgresQuotaStore({ client: pool }), flushIntervalMs: 60_000, logger: bareLogger() }),
    required: ['redis'],
    run: (o) => createRedisQuotaStore(o as never),
    dispose: close,
  },
  {
    name: 'createRedisRequestStore',
    valid: () => ({
      redis,
      prefixes: { rateLimits: 'keyset-options-test:rl:', quotas: 'keyset-options-test:q:', leases: 'keyset-options-test:l:' },
      timeoutMs: 500,
      durable: createPostgresQuotaStore({ client: pool }),
      flushIntervalMs: 60_000,
      logger: bareLogger(),
    }),
    nested: ['prefixes'],
    required: ['redis'],
    run: (o) => createRedisRequestStore(o as never),
    dispose: close,
  },
  {
    name: 'createRevocationBus',
    valid: () => ({ publisher: redis, subscriber, keyring: keyring(), channel: 'keyset-options-test', publishOnChange: true, sharded: false, timeoutMs: 2000, ackTimeoutMs: 10, logger: bareLogger() }),
    required: ['publisher', 'subscriber', 'keyring'],
    run: async (o) => {
      const bus = createRevocationBus(o as never);
      await bus.ready;
      return bus;
    },
    dispose: close,
    validRuns: 8,
  },

  // Query builders (real PostgreSQL), OpenAPI, client
  { name: 'kysely countRows', valid: () => ({ limit: 2 }), run: (o) => kysely.countRows(kdb, kdb.selectFrom('keyset_options_test').select('id'), o as never) },
  { name: 'drizzle countRows', valid: () => ({ limit: 2 }), run: (o) => drizzle.countRows(ddb as never, table, undefined, o as never) },
  {
    name: 'drizzle keysetPage',
    valid: () => ({ db: ddb, where: undefined }),
    required: ['db'],
    // An offset page past the first row: the options build its subquery.
    run: (o) => drizzle.keysetPage(table, { mode: 'offset', limit: 1, take: 2, offset: 1, sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], fingerprint: '' }, [{ key: 'id', dir: 'asc', type: 'int', unique: true }], o as never),
  },
  { name: 'prisma countRows', valid: () => ({ limit: 2 }), run: (o) => prismaPages.countRows(prisma.item, undefined, o as never) },
  {
    name: 'prisma findManyPage',
    valid: () => ({ sort: [{ key: 'id', dir: 'asc', type: 'bigint', unique: true }], dialect: 'postgres', timestamps: { client: prisma, table: `${PRISMA_SCHEMA}.items`, fields: {} } }),
    nested: ['timestamps'],
    required: ['sort', 'dialect', 'timestamps.client', 'timestamps.table'],
    run: (o) =>
      prismaPages.findManyPage(prisma.item, { mode: 'cursor', limit: 1, take: 2, direction: 'forward', after: null, sort: [{ key: 'id', dir: 'asc', type: 'bigint', unique: true }], fingerprint: '' }, {}, o as never),
  },
  { name: 'keysetComponents', valid: () => ({ limits: { default: 20, max: 100, overMax: 'reject', maxOffset: 10_000 }, sortValues: ['id', '-id'], keyPrefix: 'acme_live' }), nested: ['limits'], required: ['limits.default', 'limits.max'], run: (o) => openapi.keysetComponents(o as never) },
  { name: 'pageResponses', valid: () => ({ modes: ['cursor'], authenticated: true }), run: (o) => openapi.pageResponses({ type: 'object' }, o as never) },
  { name: 'pageParameters', valid: () => ({ modes: ['cursor', 'offset'], sort: true }), run: (o) => openapi.pageParameters(o as never) },
  ...(['paginate', 'pages'] as const).map(
    (fn): Fixture => ({
      name: `client ${fn}`,
      valid: () => ({ direction: 'forward', apiKey: undefined, headers: { accept: 'application/json' }, fetch: onePage, maxPages: 2, signal: new AbortController().signal, maxRetries: 1, maxRetryAfterSeconds: 1 }),
      required: ['fetch'],
      error: TypeError,
      run: async (o) => {
        for await (const _ of client[fn]('https://api.example.com/things', o as never)) void _;
      },
    }),
  ),
];

describe.each(FIXTURES.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
  it('refuses every misspelt option name, naming it with its path and a known name', async () => {
    const sites = sitesOf(fixture, fixture.valid());
    await fc.assert(
      fc.asyncProperty(fc.nat(sites.length - 1), fc.integer({ min: 0, max: 5 }), fc.nat(), fc.constantFrom(...LETTERS), async (siteIndex, kind, where, letter) => {
        const site = sites[siteIndex]!;
        const wrong = misspell(site.name, kind, where, letter);
        fc.pre(!site.known.has(wrong));
        const options = fixture.valid();
        rename(at(options, site.path), site.name, wrong);
        const { made, error } = await outcome(fixture, options);
        if (made !== undefined) await fixture.dispose?.(made as never);
        expect(error).toBeInstanceOf(fixture.error ?? ConfigError);
        const message = (error as Error).message;
        expect(message).toContain(`unknown option \`${site.shown.slice(0, -site.name.length)}${wrong}\``);
        expect(message).toMatch(/\(did you mean `[^`]+`\?\)$/);
      }),
      { numRuns: 60 },
    );
  });

  it('accepts every valid options object', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), async (bits) => {
        let i = 0;
        const options = subset(fixture, fixture.valid(), () => bits[i++ % bits.length]!);
        const { made, error } = await outcome(fixture, options);
        if (made !== undefined) await fixture.dispose?.(made as never);
        expect(error).toBeUndefined();
      }),
      { numRuns: fixture.validRuns ?? 40 },
    );
  });
});

/**
 * Functions that take an options object and are not held to the check, each with why. Any
 * other exported function of a package's source with an `options` parameter must have a
 * fixture above: a new factory cannot be added without its check.
 */
const NOT_CHECKED: Readonly<Record<string, string>> = {
  'core toProblem': 'per request (every error response); left to TypeScript',
  'core parsePageQuery': 'per request; left to TypeScript',
  'core keysetWhere': 'per request; left to TypeScript',
  'core rateLimitHeaders': 'per request; left to TypeScript',
  'core missingScopes': 'per request; left to TypeScript',
  'core resolveModes': "the paginator's own options, already checked",
  'core apiKeyCheckOptions': "builds a route's guard options from an adapter's options, which apiKey checked",
  'redis redisQuotaStoreParts': 'internal: the options createRedisQuotaStore or createRedisRequestStore already checked',
  'core createPaginatorCursorCodec': "internal: the paginator's cursor options, already checked",
  'core resolveKeyringOptions': "createKeyring's options check itself (it runs there)",
  'core createKeyAuthenticator': 'internal: built by createKeyring from checked options',
  'core createKeyVerifier': 'internal: built by createKeyring from checked options',
  'core createRawDigest': 'internal: built by createKeyring from checked options',
  'core createQuotaSpender': 'internal: built by createRateLimiter from checked options',
  'core createRateLimits': 'internal: the rate-limit part of createRateLimiter, built from its checked options',
  'core limitRequest': "per request: the limiter's check(key, policies, options), whose key and cost it validates itself",
  'core limiterOptions': "internal: the guard's per-request limiter options, built from a route's checked options",
  'core createStoreDecider': 'internal: built by createRateLimiter and the guard\'s refusedCredentials from checked options',
  'core createFailureLog': 'internal: built by the keyring and the limiter',
  'core createRefusedCredentialLimit': "internal: the guard's refusedCredentials, checked by createApiKeyGuard",
  'core validateOverlap': "internal: a rotate call's overlap, validated as input",
  'core adminActor': "internal: the admin factories' actor, whose options they check",
  'core assertKnownOptions': 'the check itself',
  'core missingPermissions': 'per request (a refused key); its one option is a boolean, left to TypeScript',
  'core grantsQuery': 'per request (every permission check); its one option is a boolean, left to TypeScript',
  'graphql planConnection': "per request; its options are the paginator's plan options, which planSlice checks",
  'graphql connection': 'per request; left to TypeScript',
  'graphql connectionTypeDefs': 'runs once per schema and returns SDL text; its one option is a boolean, left to TypeScript',
  'client assertKnownOptions': 'the check itself',
  ...Object.fromEntries(['hono', 'express', 'fastify', 'fetch'].map((a) => [`${a} sendPage`, 'per request; left to TypeScript'])),
};

describe('every function that takes options is checked, or says why not', () => {
  it('has a fixture here or an entry in NOT_CHECKED', () => {
    const root = join(import.meta.dirname, '..', 'packages');
    const found: string[] = [];
    const walk = (pkg: string, dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(pkg, path);
        else if (/\.ts$/.test(entry.name) && !/\.(test|prop\.test|test-support|contract|bench)\.ts$/.test(entry.name)) {
          for (const m of readFileSync(path, 'utf8').matchAll(/^export (?:async )?function\*? ?([A-Za-z]+)(?:<[^>]*>)?\(([^)]*)\)/gm)) {
            if (/\b(options|first)\b/.test(m[2]!)) found.push(`${pkg} ${m[1]}`);
          }
        }
      }
    };
    for (const pkg of readdirSync(root)) if (pkg !== 'conformance') walk(pkg, join(root, pkg, 'src'));
    const bare = new Set(['core', 'postgres', 'redis', 'openapi']);
    const names = new Set(FIXTURES.map((f) => f.name));
    const missing = found.filter((id) => {
      const [pkg, fn] = id.split(' ') as [string, string];
      return !names.has(id) && !(bare.has(pkg) && names.has(fn)) && NOT_CHECKED[id] === undefined;
    });
    expect(missing).toEqual([]);
    expect(found.length).toBeGreaterThan(50);
  });
});
