/**
 * The small world every adapter's conformance app serves: 47 in-memory items with ties in
 * the leading sort key, a memory keyring with three keys, a memory rate limiter. Built from
 * `@keyset/core` alone, so a server under Bun, Deno or workerd can build it too.
 * Test support only: this package is private and never published.
 * @module
 */
import {
  createApiKeyGuard,
  createConcurrencyLimit,
  createKeyAdmin, createKeyring,
  createRoleAdmin,
  createMemoryKeyStore,
  createPaginator,
  createRateLimiter,
  paginateArray,
} from '@keyset/core';
import type { ApiKeyGuard, CountedTotal, Keyring, KeyStore, PagePlan, Paginator, SortSpec } from '@keyset/core';

/** One row of the conformance collection. */
export interface Item {
  id: number;
  score: number;
  status: 'paid' | 'open';
  name: string;
}

/** Everything a conformance app needs, built from core factories only. */
export interface ConformanceFixture {
  readonly items: readonly Item[];
  readonly sort: SortSpec;
  readonly paginator: Paginator<Item>;
  readonly keyring: Keyring;
  readonly guard: ApiKeyGuard;
  /** A guard whose key store is unreachable: every well-formed key gets 503 `unavailable`. */
  readonly downGuard: ApiKeyGuard;
  /** The same keyring behind one trusted proxy (`trustProxy: { hops: 1 }`): the client is the last `X-Forwarded-For` entry. */
  readonly proxyGuard: ApiKeyGuard;
  /**
   * A guard over the same keys whose keyring reads them from `Authorization: ApiKey`,
   * `Authorization: Bearer` and `X-API-Key` (`schemes`); `guard` reads `ApiKey` only.
   */
  readonly anySchemeGuard: ApiKeyGuard;
  /**
   * Key strings: `reader` holds `items:read`; `writer` only `items:write` (1,000 requests
   * per hour); `limited` allows
   * 2 requests per hour; `loopback` may only be used from 127.0.0.0/8 and ::1; `elsewhere`
   * only from 203.0.113.0/24 (never the test's own address); `metered` has a quota of 5
   * credits, never refilled; `inflight` may have one request in progress at a time
   * (the guard's `concurrency`; other keys have no in-flight limit).
   */
  readonly keys: {
    readonly reader: string;
    readonly writer: string;
    /** `items:write` of its own and `items:audit` through its role `auditing`: satisfies `PERMITTED_QUERY` by its second branch. */
    readonly auditor: string;
    readonly limited: string;
    readonly loopback: string;
    readonly elsewhere: string;
    readonly metered: string;
    readonly inflight: string;
  };
  /** A well-formed key (valid checksum) that this keyring never issued. */
  readonly foreignKey: string;
  /**
   * What a route handler fetches for a plan, honouring the `status` filter. The paginator
   * counts `total` exactly up to `TOTAL_CAP` rows: the unfiltered collection (47) answers
   * `{ value: 40, accuracy: 'atLeast' }`, a filtered one its exact count.
   */
  list(plan: PagePlan, query: URLSearchParams): { rows: Item[]; total: number | CountedTotal };
  /** The filters bound into the cursor: `{ status }` when the query has one. */
  filters(query: URLSearchParams): Record<string, unknown>;
  /** Errors the apps' problem handlers reported through `onError`, with their status. */
  readonly reported: { error: unknown; status: number }[];
  close(): Promise<void>;
}

/** The permission query `GET /permitted` requires: read items, or write them with their audit trail. */
export const PERMITTED_QUERY = { or: ['items:read', { and: ['items:write', 'items:audit'] }] } as const;

export const PREFIX = 'conf_test';
export const REALM = 'conformance';
export const LIMITS = { default: 5, max: 20, overMax: 'reject' } as const;
/** The conformance paginator counts offset mode's `total` up to this many rows (`total: { mode: 'exact', cap }`). */
export const TOTAL_CAP = 40;

/** The 47 items every fixture serves, the same in every process and runtime. */
export function conformanceItems(): Item[] {
  return Array.from({ length: 47 }, (_, i) => ({
    id: i + 1,
    score: (i * 5) % 7,
    status: i % 3 === 0 ? 'paid' : 'open',
    name: `item ${i + 1} ✓`,
  }));
}

/**
 * The path where an app in another process or runtime tells the suite about its world
 * (`worldResponse`), read by `remoteWorld()`. Not a route of the app under test: the
 * server entry answers it before the adapter sees the request.
 */
export const WORLD_PATH = '/__conformance/world';

/** What `WORLD_PATH` answers: the keys issued and the errors reported so far. */
export interface WorldReport {
  keys: ConformanceFixture['keys'];
  foreignKey: string;
  reported: { status: number; message: string }[];
}

/** The JSON `Response` a remote server entry sends for `WORLD_PATH`. */
export function worldResponse(fixture: ConformanceFixture): Response {
  const report: WorldReport = {
    keys: fixture.keys,
    foreignKey: fixture.foreignKey,
    reported: fixture.reported.map(({ error, status }) => ({ status, message: error instanceof Error ? error.message : String(error) })),
  };
  return new Response(JSON.stringify(report), { headers: { 'content-type': 'application/json' } });
}

/** Builds a fresh fixture (own keyring, limiter and reported-errors list). */
export async function createConformanceFixture(): Promise<ConformanceFixture> {
  const items = conformanceItems();
  const sort: SortSpec = [
    { key: 'score', dir: 'desc', type: 'int' },
    { key: 'id', dir: 'asc', type: 'int', unique: true },
  ];
  const paginator = createPaginator<Item>({
    endpoint: 'GET /items',
    sort,
    // Clients may order by score or id (`?sort=id`, `?sort=-score`).
    sortable: [
      { name: 'score', type: 'int' },
      { name: 'id', type: 'int', unique: true },
    ],
    limits: LIMITS,
    // `x` stands for a parameter the app reads and keyset does not (`expand`, `fields`):
    // kept in every `Link`. Any other parameter a client adds is dropped from the links.
    keepParams: ['x'],
    total: { mode: 'exact', cap: TOTAL_CAP },
    cursor: { secrets: ['conformance-cursor-secret-0123456789'] },
  });
  const store = createMemoryKeyStore();
  const keyring = createKeyring({ store, prefix: PREFIX });
  const anySchemeKeyring = createKeyring({ store, prefix: PREFIX, schemes: ['ApiKey', 'Bearer', 'X-API-Key'] });
  const anySchemeGuard = createApiKeyGuard({ keyring: anySchemeKeyring, realm: REALM });
  const admin = createKeyAdmin(keyring);
  const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 60 } });
  const guard = createApiKeyGuard({ keyring, limiter, realm: REALM, concurrency: createConcurrencyLimit({ max: (key) => (key.name === 'inflight' ? 1 : null) }) });
  const reader = (await admin.issue({ name: 'reader', scopes: ['items:read'] })).key;
  // writer's own limit refills one request per 3.6 s, so the suite can see a 403 being counted.
  const writer = (await admin.issue({ name: 'writer', scopes: ['items:write'], rateLimit: { limit: 1000, windowSeconds: 3600 } })).key;
  const limited = (await admin.issue({ name: 'limited', scopes: ['items:read'], rateLimit: { limit: 2, windowSeconds: 3600 } })).key;
  const loopback = (await admin.issue({ name: 'loopback', scopes: ['items:read'], ipAllowlist: ['127.0.0.0/8', '::1'] })).key;
  const elsewhere = (await admin.issue({ name: 'elsewhere', scopes: ['items:read'], ipAllowlist: ['203.0.113.0/24'] })).key;
  // 5 credits, never refilled: `GET /expensive` (cost 2) answers twice, then 429 quota_exhausted.
  const metered = (await admin.issue({ name: 'metered', scopes: ['items:read'], quota: { remaining: 5 } })).key;
  const inflight = (await admin.issue({ name: 'inflight', scopes: ['items:read'] })).key;
  const roles = createRoleAdmin(keyring);
  await roles.create({ name: 'auditing', permissions: ['items:audit'] });
  const auditorKey = await admin.issue({ name: 'auditor', scopes: ['items:write'] });
  await roles.setKeyRoles(auditorKey.record.id, ['auditing']);
  const auditor = auditorKey.key;
  const otherKeyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX });
  const foreignKey = (await createKeyAdmin(otherKeyring).issue({ name: 'stranger', scopes: ['items:read'] })).key;
  await otherKeyring.close();
  const memory = createMemoryKeyStore();
  const unreachable: KeyStore = {
    ...memory,
    findByDigest: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.9:5432')),
  };
  const downKeyring = createKeyring({ store: unreachable, prefix: PREFIX, cache: false });
  const downGuard = createApiKeyGuard({ keyring: downKeyring, realm: REALM });
  const proxyGuard = createApiKeyGuard({ keyring, realm: REALM, trustProxy: { hops: 1 } });

  const select = (query: URLSearchParams): Item[] => {
    const status = query.get('status');
    return status === null ? items : items.filter((item) => item.status === status);
  };
  return {
    items,
    sort,
    paginator,
    keyring,
    guard,
    downGuard,
    proxyGuard,
    anySchemeGuard,
    keys: { reader, writer, auditor, limited, loopback, elsewhere, metered, inflight },
    foreignKey,
    list: (plan, query) => {
      const selected = select(query);
      const { rows } = paginateArray(selected, plan, plan.sort);
      // A capped count, as `countTotal` runs it: at most cap + 1 rows are counted.
      const cap = plan.mode === 'offset' && plan.total?.mode === 'exact' ? plan.total.cap : null;
      const total: number | CountedTotal = cap !== null && selected.length > cap ? { value: cap, accuracy: 'atLeast' } : selected.length;
      return { rows, total };
    },
    filters: (query) => {
      const status = query.get('status');
      return status === null ? {} : { status };
    },
    reported: [],
    close: async () => {
      await keyring.close();
      await anySchemeKeyring.close();
      await downKeyring.close();
    },
  };
}

/**
 * The body of `GET /inflight/stream`: `chunks` lines `chunk <n>`, produced one per read,
 * then the end; with `chunks` null, one line and then nothing until the reader goes away
 * (the response stays open, so its request stays in flight).
 */
export function inflightStream(chunks: number | null): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  let stop = (): void => {};
  const cancelled = new Promise<void>((resolve) => (stop = resolve));
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (chunks !== null && sent >= chunks) return controller.close();
        // A timer keeps the wait visible as pending work: workerd ends a request whose
        // promises nothing can resolve as hung.
        if (chunks === null && sent >= 1) return Promise.race([cancelled, new Promise<void>((resolve) => setTimeout(resolve, 500))]);
        sent += 1;
        controller.enqueue(encoder.encode(`chunk ${sent}\n`));
        return undefined;
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 0 },
  );
}

/** `GET /inflight/stream?chunks=3` → 3; no `chunks` → null (hold the stream open). */
export function inflightChunks(query: URLSearchParams): number | null {
  const chunks = query.get('chunks');
  return chunks === null ? null : Number(chunks);
}

/** Resolves once `signal` aborts (the client went away): `GET /inflight/slow` waits for it. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    // Pending work while waiting (see inflightStream): a timer until the abort.
    const keep = setInterval(() => {}, 1000);
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(keep);
        resolve();
      },
      { once: true },
    );
  });
}

/** The statuses `/inflight/status` answers: success, redirects, no-content and errors, so a lease is seen to end after each. */
export const INFLIGHT_STATUSES: readonly number[] = [200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 404, 409, 418, 429, 500, 503];

/**
 * What `/inflight/status?status=<n>` answers: status `n` (200 by default), with the body
 * `status <n>` or, for a status that has none (204, 304), no body.
 */
export function inflightStatus(query: URLSearchParams): { status: number; body: string | null } {
  const status = Number(query.get('status') ?? '200');
  return { status, body: status === 204 || status === 304 ? null : `status ${status}` };
}

/**
 * The messages of the errors `GET /inflight/rethrown` and `GET /inflight/non-error` throw: the
 * app's error handler rethrows the first, and throws a non-`Error` (a string) for the second.
 */
export const RETHROWN = 'rethrown by the error handler';
export const NON_ERROR = 'answered by a throw of a non-Error';

/** What `POST /echo` accepts: a larger body is 413. */
export const MAX_ECHO_BYTES = 16_384;

/** The peer `GET /options/peer` names with `apiKey({ clientAddress })`: inside the `elsewhere` key's allowlist. */
export const OPTION_PEER = '203.0.113.9';
