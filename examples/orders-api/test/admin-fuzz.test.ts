/**
 * Fuzz of the admin routes (`/api/keys`: issue, list, get, update, limits, rotate,
 * revoke) on both stores, PGlite (Hono and Express servers) and a real PostgreSQL (all
 * four servers on one database): random
 * and hostile names, scopes, timestamps (years 0 to 275760, every offset), rate limits
 * and quotas around every integer boundary, metadata, allowlists, unknown fields and raw
 * bodies. Whatever an administrator sends, the answer is never a 5xx, a 4xx is a problem
 * with a code, and nothing reaches the error log. A key the API issued is readable and
 * usable (no 5xx either). The read routes get the same treatment: random filters, sorts,
 * cursors (real, truncated, extended), limits and dates on `GET /api/orders` and
 * `/api/reports/daily`, and a mistyped key in any of them is never quoted back. Failures print a replayable seed (fast-check);
 * `ADMIN_FUZZ_RUNS` (default 150 per server) runs longer.
 * The PostgreSQL half skips when no server answers (TEST_DATABASE_URL; fails under CI=true).
 */
import { postgresUrl } from '@keyset/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { call, startApi, type Reply, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();
const RUNS = Number(process.env.ADMIN_FUZZ_RUNS ?? 150);
/** The admin key has no limit of its own: the default policy must not turn a long fuzz run into 429s. */
const common = { seedOrders: 20, rateLimit: { limit: 1_000_000, windowSeconds: 1 } };

/** Characters a database may refuse or change: NUL, controls, lone surrogates, astral, noncharacters. */
const nastyChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u2028', '\ufeff', '\uffff', '\ufffe', '\\', '"', "'", '%', ' ') },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\u{1F511}', '\u{10FFFF}', '\u0301', 'é', '日') },
);
const nastyString = (maxLength: number) => fc.array(nastyChar, { maxLength }).map((chars) => chars.join(''));

/** Integers around every boundary a store might have (int4, int8, 2^53, 10^15). */
const bigNumber = fc.oneof(
  fc.integer({ min: -5, max: 100 }),
  fc.constantFrom(0, 1, 86_400, 31_622_400, 31_622_401, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 1e9, 1e15, 1e15 + 1, 2 ** 53 - 1, 2 ** 53, 2 ** 63, 1e300, -1, -(2 ** 31), 0.5, 1.5, 1e-300),
  fc.double({ noNaN: true }),
  fc.maxSafeNat(),
);
const looseValue = fc.oneof(bigNumber, nastyString(8), fc.constant(null), fc.boolean(), fc.constant([]), fc.constant({}));

const offset = fc.oneof(
  fc.constant('Z'),
  fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(
    ([sign, h, m]) => `${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`,
  ),
);
/** Timestamps from year 0 to 275760, in RFC 3339 and Date's own expanded-year form, and junk. */
const timestamp = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.constantFrom('', '.999', '.999999999', '.1'), offset).map(
    ([y, mo, d, h, mi, s, frac, off]) =>
      `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:${String(mi).padStart(2, '0')}:${String(s).padStart(2, '0')}${frac}${off}`,
  ),
  fc.date({ min: new Date(Date.now() + 60_000), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.9999Z', '+010000-01-01T00:00:00Z', '+275760-09-13T00:00:00.000Z', '2999-02-29T00:00:00Z', '2100-01-01T24:00:00Z', '2100-01-01', 'tomorrow', ''),
  looseValue,
);

const rateLimit = fc.record(
  { name: fc.oneof(fc.constantFrom('default', 'second', 'day', 'a'.repeat(64), 'a'.repeat(65)), nastyString(6), looseValue), limit: bigNumber, windowSeconds: bigNumber, burst: bigNumber },
  { requiredKeys: ['limit', 'windowSeconds'] },
);
const quota = fc.record(
  { remaining: bigNumber, refill: fc.oneof(fc.constant(null), fc.record({ amount: bigNumber, interval: fc.oneof(fc.constantFrom('daily', 'monthly', 'weekly'), bigNumber) })) },
  { requiredKeys: [] },
);
const metadataValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, nastyString(10), bigNumber, fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(nastyString(6), tie('value'), { maxKeys: 3 })),
})).value;
const metadata = fc.oneof(fc.dictionary(nastyString(8), metadataValue, { maxKeys: 4 }), fc.constant({ big: 'x'.repeat(5000) }), looseValue);
const ipAllowlist = fc.oneof(
  fc.array(fc.oneof(fc.constantFrom('10.0.0.0/8', '::1', '2001:db8::/32', '0.0.0.0/0', '1.2.3.4/33', '1.2.3.4\u0000', 'fe80::1%eth0', '::ffff:1.2.3.4'), nastyString(12)), { maxLength: 4 }),
  looseValue,
);
const scopes = fc.oneof(
  fc.uniqueArray(fc.constantFrom('orders:read', 'reports:read', 'keys:admin'), { minLength: 1 }),
  fc.array(fc.oneof(fc.constantFrom('orders:read', 'orders:*', '*'), nastyString(10)), { maxLength: 3 }),
  looseValue,
);
const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('ci', 'billing service', 'x'.repeat(100), 'x'.repeat(101), '  ') }, { weight: 3, arbitrary: nastyString(20) }, { weight: 1, arbitrary: looseValue });

const issueBody = fc.record(
  {
    name,
    scopes,
    expiresAt: timestamp,
    rateLimit: fc.oneof(rateLimit, looseValue),
    rateLimits: fc.oneof(fc.array(rateLimit, { maxLength: 3 }), looseValue),
    quota: fc.oneof(quota, looseValue),
    metadata,
    ipAllowlist,
    environment: fc.oneof(fc.constantFrom('ks_live', 'live', 'test'), nastyString(6), looseValue),
  },
  { requiredKeys: [] },
).chain((body) =>
  // Now and then an unknown member too (a typo, `__proto__`, a NUL in the name).
  fc.option(fc.tuple(fc.oneof(fc.constantFrom('scope', '__proto__', 'constructor'), nastyString(6)), looseValue), { freq: 5 }).map((extra) =>
    extra === null ? body : Object.defineProperty({ ...body }, extra[0], { value: extra[1], enumerable: true }),
  ),
);
/** Mostly-valid issue bodies, so that some keys get issued and later routes have targets. */
const plausibleIssue = fc.record(
  {
    name: fc.oneof(fc.constantFrom('fuzz'), nastyString(12)),
    scopes: fc.constant(['orders:read']),
    expiresAt: fc.oneof(timestamp, fc.constant(undefined)),
    rateLimits: fc.oneof(fc.array(rateLimit, { minLength: 1, maxLength: 2 }), fc.constant(undefined)),
    quota: fc.oneof(quota, fc.constant(undefined)),
  },
  { requiredKeys: ['name', 'scopes'] },
);

const rawBody = fc.oneof(
  fc.constantFrom('', '{', '[]', 'null', '"x"', '{"name":"\\u0000","scopes":["orders:read"]}', '{"name":"\\ud800","scopes":["orders:read"]}', '{"__proto__":{"x":1}}', '{"name":"a","scopes":["orders:read"],"name":"b"}', '{"expiresAt":"9999-12-31T23:59:59-23:59","name":"a","scopes":["orders:read"]}'),
  nastyString(40),
  fc.json(),
);

type Action =
  | { kind: 'issue'; body: unknown; raw: boolean }
  | { kind: 'limits'; target: number; body: unknown }
  | { kind: 'update'; target: number; body: unknown }
  | { kind: 'rotate'; target: number; body: unknown }
  | { kind: 'get' | 'revoke'; target: number | string }
  | { kind: 'list'; query: string };

const target = fc.nat({ max: 1000 });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: issueBody.map((body) => ({ kind: 'issue' as const, body, raw: false })) },
  { weight: 3, arbitrary: plausibleIssue.map((body) => ({ kind: 'issue' as const, body, raw: false })) },
  { weight: 1, arbitrary: rawBody.map((body) => ({ kind: 'issue' as const, body, raw: true })) },
  { weight: 2, arbitrary: fc.tuple(target, fc.record({ rateLimit: fc.oneof(rateLimit, looseValue), rateLimits: fc.oneof(fc.array(rateLimit, { maxLength: 3 }), looseValue), quota: fc.oneof(quota, looseValue) }, { requiredKeys: [] })).map(([t, body]) => ({ kind: 'limits' as const, target: t, body })) },
  { weight: 1, arbitrary: fc.tuple(target, fc.record({ metadata, ipAllowlist }, { requiredKeys: [] })).map(([t, body]) => ({ kind: 'update' as const, target: t, body })) },
  { weight: 1, arbitrary: fc.tuple(target, fc.record({ overlapSeconds: bigNumber }, { requiredKeys: [] })).map(([t, body]) => ({ kind: 'rotate' as const, target: t, body })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('get', 'revoke') as fc.Arbitrary<'get' | 'revoke'>, fc.oneof(target, nastyString(24))).map(([kind, t]) => ({ kind, target: t })) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom('limit', 'offset', 'cursor', 'sort', 'x'), fc.oneof(bigNumber.map(String), nastyString(10), fc.constantFrom('9007199254740991', '1e3', '-1'))), { maxLength: 3 })
      .map((pairs) => ({ kind: 'list' as const, query: pairs.map(([k, v]) => `${k}=${encodeURIComponentLoose(v)}`).join('&') })),
  },
);

function encodeURIComponentLoose(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A JSON text for `body`, keeping lone surrogates as `\udXXX` escapes (JSON.stringify does). */
function json(body: unknown): string {
  return JSON.stringify(body) ?? 'null';
}

function expectNo5xx(reply: Reply, what: string): void {
  expect(reply.status, `${what} → ${reply.status} ${reply.text.slice(0, 300)}`).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
    expect(typeof reply.body?.code, what).toBe('string');
  }
}

interface Target {
  label: string;
  /** The adapter of each instance, in order. */
  adapters: readonly AdapterName[];
  start(): Promise<{ instances: TestApi[]; admin: string; cleanup(): Promise<void> }>;
}

const targets: Target[] = [
  {
    // PGlite serves one process: one embedded database per instance (two, to keep memory sane).
    label: 'PGlite',
    adapters: ['hono', 'express'],
    async start() {
      const instances = await Promise.all([startApi({ ...common, adapter: 'hono' }), startApi({ ...common, adapter: 'express' })]);
      return { instances, admin: '', cleanup: async () => void (await Promise.all(instances.map((t) => t.stop({ remove: true })))) };
    },
  },
];
if (serverUrl !== undefined) {
  targets.push({
    label: 'PostgreSQL',
    adapters: ADAPTERS,
    async start() {
      const database = `orders_admin_fuzz_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const adminClient = new pg.Client({ connectionString: serverUrl });
      await adminClient.connect();
      await adminClient.query(`CREATE DATABASE ${database}`);
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      // One database, every adapter: instances started after the first one find the admin key there.
      const first = await startApi({ ...common, adapter: ADAPTERS[0], databaseUrl: url.href });
      const others = await Promise.all(ADAPTERS.slice(1).map((adapter) => startApi({ ...common, adapter, databaseUrl: url.href })));
      const instances = [first, ...others];
      const admin = first.api.adminKey!;
      return {
        instances,
        admin,
        async cleanup() {
          await Promise.all(instances.map((t) => t.stop({ remove: true })));
          await adminClient.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
          await adminClient.end();
        },
      };
    },
  });
}

describe.each(targets)('admin and read routes fuzzed on $label: never a 5xx', ({ adapters, start }) => {
  let instances: TestApi[];
  let adminFor: (t: TestApi) => string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const started = await start();
    instances = started.instances;
    cleanup = started.cleanup;
    adminFor = (t) => started.admin || t.api.adminKey!;
  }, 120_000);
  afterAll(async () => {
    await cleanup?.();
  });

  it.each(adapters)('%s: whatever the body, a 4xx problem or a success; issued keys read back and work', async (adapter) => {
    const t = instances[adapters.indexOf(adapter)]!;
    const admin = adminFor(t);
    const ids: string[] = [];
    const pick = (i: number): string => (ids.length === 0 ? 'key_0000000000000000000000' : ids[i % ids.length]!);
    let issued = 0;
    await fc.assert(
      fc.asyncProperty(action, async (a) => {
        const base = t.api.url;
        switch (a.kind) {
          case 'issue': {
            const body = a.raw ? (a.body as string) : json(a.body);
            const reply = await call(base, '/api/keys', { key: admin, method: 'POST', body, headers: { 'content-type': 'application/json' } });
            expectNo5xx(reply, `POST /api/keys ${body.slice(0, 300)}`);
            if (reply.status === 201) {
              issued += 1;
              ids.push(reply.body.id);
              const read = await call(base, `/api/keys/${reply.body.id}`, { key: admin });
              expect(read.status, read.text).toBe(200);
              expect(read.body.name).toBe(reply.body.name);
              expect(read.body.expiresAt).toBe(reply.body.expiresAt);
              expectNo5xx(await call(base, '/api/orders?limit=1', { key: reply.body.key }), `GET /api/orders with a key from ${body.slice(0, 300)}`);
            }
            return;
          }
          case 'limits':
          case 'update':
          case 'rotate': {
            const id = pick(a.target);
            const [method, path] = a.kind === 'rotate' ? ['POST', `/api/keys/${id}/rotate`] : ['PATCH', a.kind === 'limits' ? `/api/keys/${id}/limits` : `/api/keys/${id}`];
            const body = json(a.body);
            const reply = await call(base, path, { key: admin, method, body, headers: { 'content-type': 'application/json' } });
            expectNo5xx(reply, `${method} ${path} ${body.slice(0, 300)}`);
            if (reply.status < 300) expectNo5xx(await call(base, `/api/keys/${id}`, { key: admin }), `GET after ${a.kind}`);
            return;
          }
          case 'get':
          case 'revoke': {
            const id = typeof a.target === 'number' ? pick(a.target) : encodeURIComponentLoose(a.target);
            const reply = await call(base, `/api/keys/${id}`, { key: admin, method: a.kind === 'get' ? 'GET' : 'DELETE' });
            expectNo5xx(reply, `${a.kind} /api/keys/${id}`);
            return;
          }
          case 'list': {
            const reply = await call(base, `/api/keys?${a.query}`, { key: admin });
            expectNo5xx(reply, `GET /api/keys?${a.query}`);
          }
        }
      }),
      { numRuns: RUNS },
    );
    // The property must have exercised the write paths, not only refusals.
    expect(issued).toBeGreaterThan(0);
    const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(errors, errors.join('\n').slice(0, 2000)).toEqual([]);
  }, 180_000);

  // The read routes put client values into SQL too (filters, sort, cursor positions, a date).
  it.each(adapters)('%s: GET /api/orders and /api/reports/daily with any query string: never a 5xx, never a mistyped key quoted back', async (adapter) => {
    const t = instances[adapters.indexOf(adapter)]!;
    const admin = adminFor(t);
    const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 1_000_000, windowSeconds: 1 } } });
    expect(issued.status).toBe(201);
    const reader = issued.body.key as string;
    const first = await call(t.api.url, '/api/orders?limit=2', { key: reader });
    const cursor = new URL(first.headers.get('link')!.match(/<([^>]+)>; rel="next"/)![1]!).searchParams.get('cursor')!;
    // A mistyped key (a checksum-valid one is api_key_in_query before any parser sees it):
    // whatever parameter it lands in, glued to whatever, no reply quotes 8 of its characters.
    const secret = reader.slice(-38);
    const typo = `${reader.slice(0, -1)}${reader.endsWith('x') ? 'y' : 'x'}`;
    const keyShaped = fc.tuple(fc.constantFrom('', 'x', '-', '--', 'paid', 'amountCents,', 'cust_'), fc.constantFrom(typo, typo.slice(3), `${typo}x`)).map(([before, k]) => before + k);
    const value = fc.oneof(
      { weight: 1, arbitrary: keyShaped },
      { weight: 1, arbitrary: bigNumber.map(String) },
      { weight: 2, arbitrary: nastyString(12) },
      { weight: 1, arbitrary: timestamp.map(String) },
      {
        weight: 4,
        arbitrary: fc.constantFrom(
          'paid', 'pending', 'cust_0001', '\u0000', 'cust_\u0000', '\u{1F511}', '-createdAt', 'amountCents,-id', '-amountCents', 'createdAt,createdAt',
          '9999-12-31', '0001-01-01', '2024-02-29', cursor, `${cursor}x`, cursor.slice(0, -2),
        ),
      },
    );
    // Few parameters: one bad one refuses the request before any SQL runs.
    const query = fc
      .array(fc.tuple(fc.constantFrom('limit', 'offset', 'cursor', 'status', 'customer', 'sort', 'date', 'x'), value), { maxLength: 3 })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponentLoose(v)}`).join('&'));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/api/orders', '/api/reports/daily'), query, async (path, q) => {
        const reply = await call(t.api.url, `${path}?${q}`, { key: reader });
        expectNo5xx(reply, `GET ${path}?${q}`);
        for (let i = 0; i + 8 <= secret.length; i++) expect(reply.text.toLowerCase(), `GET ${path}?${q}`).not.toContain(secret.slice(i, i + 8).toLowerCase());
      }),
      { numRuns: RUNS },
    );
    const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(errors, errors.join('\n').slice(0, 2000)).toEqual([]);
    expect(t.logs.filter((line) => line.includes(secret.slice(0, 12)))).toEqual([]);
  }, 180_000);
});
