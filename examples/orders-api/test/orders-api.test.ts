/**
 * The orders API end to end, over real HTTP, once per adapter: one PGlite-backed app
 * per adapter (PGlite takes a few seconds to start), seeded with 2000 orders.
 */
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paginate } from '@keyset/client';
import got from 'got';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDataDir, DataDirLockedError } from '../src/data-dir.ts';
import type { Order } from '../src/app/orders.ts';
import { runCli } from '../src/cli.ts';
import { ADAPTERS } from '../src/config.ts';
import { call, linkTo, nextLink, startApi, type TestApi } from './helpers.ts';

/** The admin key has no limit of its own: at the default 100 a second a fast machine met a 429 where
 * the test expects another answer (these tests were run at a default of 20 a second to find them). */
const ADMIN_LIMIT = { limit: 1_000_000, windowSeconds: 1 };

const SEED = 2000;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** An item as the API documents it: the app's own type, so the test cannot drift from it. */
type OrderItem = Order;

describe.each(ADAPTERS)('orders API on %s', (adapter) => {
  let t: TestApi;
  let base: string;
  let admin: string;
  let reader: string;
  const issued: string[] = [];

  const issue = async (body: Record<string, unknown>): Promise<{ key: string; id: string; body: any }> => {
    const res = await call(base, '/api/keys', { key: admin, method: 'POST', body });
    expect(res.status, res.text).toBe(201);
    issued.push(res.body.key);
    return { key: res.body.key, id: res.body.id, body: res.body };
  };

  beforeAll(async () => {
    // MAX_OFFSET at the seed size: every walk below stays within it, and one step past it is refused.
    t = await startApi({ adapter, seedOrders: SEED, rateLimit: ADMIN_LIMIT, maxOffset: SEED });
    base = t.api.url;
    admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
    issued.push(admin);
    // The reader walks whole collections; on a fast machine that is more than the default
    // 100 requests per second, so it carries its own generous limit (limits are tested below).
    reader = (await issue({ name: 'reader', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 100_000, windowSeconds: 1 } })).key;
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ remove: true });
  });

  describe('first start', () => {
    it('writes the admin key with mode 0600, logs only its last 4, and the key works', async () => {
      const file = join(t.dataDir, 'admin.key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(t.dataDir, 'cursor.secret')).mode & 0o777).toBe(0o600);
      expect(admin).toMatch(/^ks_live_[0-9A-Za-z]{38}$/);
      expect(t.api.adminKey).toBe(admin);
      const bootLine = t.logs.find((l) => l.includes('created an admin key'));
      expect(bootLine).toContain(`…${admin.slice(-4)}`);

      const res = await call(base, '/api/keys', { key: admin });
      expect(res.status).toBe(200);
      const bootstrap = res.body.items.find((k: any) => k.name.startsWith('admin'));
      expect(bootstrap.scopes).toEqual(['keys:admin']);
    });

    it('seeded the orders with many exact timestamp ties and microseconds', async () => {
      const { rows } = await t.api.db.query<{ n: string; distinct_ts: string; micro: string }>(
        `SELECT count(*)::text AS n, count(DISTINCT created_at)::text AS distinct_ts,
                count(*) FILTER (WHERE extract(microseconds FROM created_at)::bigint % 1000 <> 0)::text AS micro
         FROM orders`,
      );
      expect(Number(rows[0]!.n)).toBe(SEED);
      expect(Number(rows[0]!.distinct_ts)).toBeLessThan(SEED / 2);
      expect(Number(rows[0]!.micro)).toBeGreaterThan(SEED / 2);
    });

    it('holds the PGlite data directory: a second process is refused, and the CLI says so', async () => {
      expect(() => lockDataDir(t.dataDir, 'cli')).toThrow(DataDirLockedError);
      const err: string[] = [];
      const code = await runCli(['list'], { env: { DATA_DIR: t.dataDir }, out: () => {}, err: (s) => err.push(s) });
      expect(code).toBe(3);
      expect(err.join('')).toMatch(/Stop the server.*admin HTTP routes/s);
    });

    it('answers /healthz without a key', async () => {
      const res = await call(base, '/healthz');
      expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
    });
  });

  describe('GET /api/orders', () => {
    let walk: OrderItem[];

    beforeAll(async () => {
      walk = [];
      let url: string | null = `${base}/api/orders?limit=100`;
      let pages = 0;
      while (url !== null) {
        const res = await call(base, url, { key: reader });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        walk.push(...res.body.items);
        const next = nextLink(res.headers);
        if (res.body.nextCursor === null) expect(next).toBeNull();
        else expect(new URL(next!).searchParams.get('cursor')).toBe(res.body.nextCursor);
        url = next;
        pages++;
        expect(pages).toBeLessThanOrEqual(SEED / 100 + 1);
      }
    }, 30_000);

    it('walks every order exactly once by cursor, strictly newest first', () => {
      expect(walk).toHaveLength(SEED);
      expect(new Set(walk.map((o) => o.id)).size).toBe(SEED);
      for (let i = 1; i < walk.length; i++) {
        const [a, b] = [walk[i - 1]!, walk[i]!];
        // Fixed-width ISO text with six fractional digits orders like the instant.
        const before = a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
        expect(before, `${JSON.stringify(a)} then ${JSON.stringify(b)}`).toBe(true);
      }
    });

    it('walks the same sequence with got’s built-in Link-header pagination and @keyset/client', async () => {
      // got follows RFC 8288 `Link: rel="next"` by default: no keyset-specific code.
      const viaGot = await got.paginate.all<OrderItem>(`${base}/api/orders?limit=100`, {
        headers: { authorization: `ApiKey ${reader}` },
        // As packages/client/README.md shows it.
        responseType: 'json',
        pagination: { transform: (response) => (response.body as { items: OrderItem[] }).items },
      });
      expect(viaGot.map((o) => o.id)).toEqual(walk.map((o) => o.id));
      const viaClient: OrderItem[] = [];
      for await (const order of paginate<OrderItem>(`${base}/api/orders?limit=70`, { apiKey: reader })) viaClient.push(order);
      expect(viaClient.map((o) => o.id)).toEqual(walk.map((o) => o.id));
    }, 30_000);

    it('returns items with the documented shape and microsecond timestamps equal to the database', async () => {
      for (const o of walk.slice(0, 50)) {
        expect(Object.keys(o).sort()).toEqual(['amountCents', 'createdAt', 'currency', 'customer', 'id', 'status']);
        expect(Number.isSafeInteger(o.id)).toBe(true);
        expect(o.createdAt).toMatch(ISO_MICROS);
        expect(o.currency).toMatch(/^[A-Z]{3}$/);
      }
      const { rows } = await t.api.db.query<{ order_id: string; ts: string; amount: string }>(
        `SELECT id::text AS order_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts,
                amount_cents::text AS amount
         FROM orders ORDER BY created_at DESC, id DESC`,
      );
      expect(walk.map((o) => `${o.id} ${o.createdAt} ${o.amountCents}`)).toEqual(rows.map((r) => `${r.order_id} ${r.ts} ${r.amount}`));
      expect(walk.some((o) => !o.createdAt.endsWith('000Z'))).toBe(true);
    });

    it('walks the same sequence by offset, with the planner\'s estimated total, exact on the last page', async () => {
      const byOffset: OrderItem[] = [];
      for (let offset = 0; offset < SEED; offset += 100) {
        const res = await call(base, `/api/orders?limit=100&offset=${offset}`, { key: reader });
        expect(res.status).toBe(200);
        if (offset + 100 < SEED) {
          // The seed is analysed, so the estimate is close; it is never below what the page proves.
          expect(res.body).toMatchObject({ totalEstimated: true });
          expect(Math.abs(res.body.total - SEED), String(res.body.total)).toBeLessThanOrEqual(SEED / 10);
          expect(res.body.total).toBeGreaterThan(offset + 100);
        } else {
          expect(res.body.total).toBe(SEED);
          expect(res.body).not.toHaveProperty('totalEstimated');
        }
        expect(res.body).not.toHaveProperty('nextCursor');
        byOffset.push(...res.body.items);
      }
      expect(byOffset).toEqual(walk);
      const last = await call(base, `/api/orders?limit=100&offset=${SEED}`, { key: reader });
      expect(last.body.items).toEqual([]);
      expect(last.body.total).toBeLessThanOrEqual(SEED);
      expect(linkTo(last.headers, 'next')).toBeNull();
      expect(new URL(linkTo(last.headers, 'prev')!).searchParams.get('offset')).toBe(String(SEED - 100));
      expect(new URL(linkTo(last.headers, 'first')!).searchParams.get('offset')).toBe('0');
    });

    it('orders by ?sort=amountCents (id breaking ties), keeps sort in Links, refuses unknown fields', async () => {
      const expected = [...walk].sort((a, b) => b.amountCents - a.amountCents || b.id - a.id).map((o) => o.id);
      const seen: number[] = [];
      let url: string | null = `${base}/api/orders?sort=-amountCents&limit=100`;
      while (url !== null) {
        const res = await call(base, url, { key: reader });
        expect(res.status, res.text).toBe(200);
        seen.push(...res.body.items.map((o: OrderItem) => o.id));
        url = linkTo(res.headers, 'next');
        if (url !== null) expect(new URL(url).searchParams.get('sort')).toBe('-amountCents');
      }
      expect(seen).toEqual(expected);
      const bad = await call(base, '/api/orders?sort=price', { key: reader });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'invalid_sort', sortable: ['createdAt', 'amountCents', 'id'] });
    }, 30_000);

    it('walks back from the last page by rel="prev" over the same pages, and @keyset/client walks backward', async () => {
      // Forward in pages of 90 (the last one short), then back by following rel="prev" alone.
      const forward: { url: string; ids: number[] }[] = [];
      let url: string | null = `${base}/api/orders?limit=90`;
      let res = await call(base, url, { key: reader });
      for (;;) {
        expect(res.status, res.text).toBe(200);
        forward.push({ url: url!, ids: res.body.items.map((o: OrderItem) => o.id) });
        url = linkTo(res.headers, 'next');
        if (url === null) break;
        res = await call(base, url, { key: reader });
      }
      expect(forward.flatMap((p) => p.ids)).toEqual(walk.map((o) => o.id));
      const back: number[][] = [];
      let prev = linkTo(res.headers, 'prev');
      while (prev !== null) {
        expect(new URL(prev).searchParams.get('cursor')).toBe(res.body.prevCursor);
        res = await call(base, prev, { key: reader });
        expect(res.status, res.text).toBe(200);
        back.push(res.body.items.map((o: OrderItem) => o.id));
        prev = linkTo(res.headers, 'prev');
      }
      expect(back).toEqual(forward.slice(0, -1).reverse().map((p) => p.ids));
      expect(res.body.prevCursor).toBeNull();
      // The client, from the last page: every order once, oldest first.
      const viaClient: number[] = [];
      for await (const order of paginate<OrderItem>(forward.at(-1)!.url, { apiKey: reader, direction: 'backward' })) viaClient.push(order.id);
      expect(viaClient).toEqual(walk.map((o) => o.id).reverse());
    }, 30_000);

    it('defaults to 20 items and refuses bad pagination parameters', async () => {
      const first = await call(base, '/api/orders', { key: reader });
      expect(first.body.items).toEqual(walk.slice(0, 20));
      for (const [query, code] of [
        ['limit=0', 'invalid_limit'],
        ['limit=abc', 'invalid_limit'],
        ['limit=101', 'limit_too_large'],
        ['offset=-1', 'invalid_offset'],
        ['cursor=garbage', 'invalid_cursor'],
        ['cursor=x&offset=0', 'conflicting_pagination'],
      ] as const) {
        const res = await call(base, `/api/orders?${query}`, { key: reader });
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.body.code, query).toBe(code);
      }
    });

    it('refuses an offset past MAX_OFFSET with 400 offset_too_large and max_offset, before any query; a cursor goes deeper', async () => {
      const res = await call(base, `/api/orders?offset=${SEED + 1}&limit=5`, { key: reader });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'offset_too_large', max_offset: SEED, detail: `\`offset\` must be at most ${SEED}, got ${SEED + 1}` });
      const keys = await call(base, `/api/keys?offset=${SEED + 1}`, { key: admin });
      expect(keys.body).toMatchObject({ code: 'offset_too_large', max_offset: SEED });
      expect((await call(base, `/api/orders?offset=${SEED}&limit=5`, { key: reader })).status).toBe(200);
    });

    it('refuses a cursor of another endpoint', async () => {
      const keys = await call(base, '/api/keys?limit=1', { key: admin });
      expect(keys.body.nextCursor).toEqual(expect.any(String));
      const res = await call(base, `/api/orders?cursor=${keys.body.nextCursor}`, { key: reader });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
    });

    /** Every page's items by following one Link relation from `url`; the last response too. */
    const follow = async (url: string, rel: 'next' | 'prev' = 'next'): Promise<{ pages: number[][]; last: Awaited<ReturnType<typeof call>> }> => {
      const pages: number[][] = [];
      let next: string | null = url;
      let res = await call(base, next, { key: reader });
      for (;;) {
        expect(res.status, res.text).toBe(200);
        pages.push(res.body.items.map((o: OrderItem) => o.id));
        next = linkTo(res.headers, rel);
        if (next === null) return { pages, last: res };
        expect(pages.length).toBeLessThan(200);
        res = await call(base, next, { key: reader });
      }
    };

    it('filters by status (repeated: any of them), walking forward and back, the filter kept in every Link', async () => {
      const wanted = new Set(['refunded', 'cancelled']);
      const expected = walk.filter((o) => wanted.has(o.status)).map((o) => o.id);
      expect(expected.length).toBeGreaterThan(100);
      const forward = await follow(`${base}/api/orders?status=refunded&status=cancelled&limit=40`);
      expect(forward.pages.flat()).toEqual(expected);
      const prev = linkTo(forward.last.headers, 'prev')!;
      expect(new URL(prev).searchParams.getAll('status')).toEqual(['refunded', 'cancelled']);
      // Back from the last page by rel="prev": the same pages, reversed.
      const back = await follow(prev, 'prev');
      expect(back.pages).toEqual(forward.pages.slice(0, -1).reverse());
      // Offset mode agrees, and its last page counts exactly.
      const byOffset = await follow(`${base}/api/orders?status=cancelled&status=refunded&offset=0&limit=100`);
      expect(byOffset.pages.flat()).toEqual(expected);
      expect(byOffset.last.body.total).toBe(expected.length);
      expect(byOffset.last.body).not.toHaveProperty('totalEstimated');
    }, 30_000);

    it('filters by customer (exact) under a client-chosen sort; one page of them has its exact total', async () => {
      const customer = walk[0]!.customer;
      const mine = walk.filter((o) => o.customer === customer);
      const expected = [...mine].sort((a, b) => a.amountCents - b.amountCents || a.id - b.id).map((o) => o.id);
      const cursorWalk = await follow(`${base}/api/orders?customer=${customer}&sort=amountCents&limit=3`);
      expect(cursorWalk.pages.flat()).toEqual(expected);
      const one = await call(base, `/api/orders?customer=${customer}&offset=0&limit=100`, { key: reader });
      expect(one.body).toEqual({ items: mine, total: mine.length });
      const nobody = await call(base, '/api/orders?customer=cust_nobody&offset=0', { key: reader });
      expect(nobody.body).toEqual({ items: [], total: 0 });
    }, 30_000);

    it('binds the filters into the cursor: the same statuses in any order share it, other filters refuse it', async () => {
      const first = await call(base, '/api/orders?status=pending&status=paid&limit=5', { key: reader });
      const cursor = first.body.nextCursor as string;
      const same = await call(base, `/api/orders?status=paid&status=pending&status=paid&cursor=${cursor}&limit=5`, { key: reader });
      expect(same.status, same.text).toBe(200);
      for (const query of ['status=paid', 'status=paid&status=pending&customer=cust_0001', '']) {
        const res = await call(base, `/api/orders?${query}&cursor=${cursor}`, { key: reader });
        expect(res.status, query).toBe(400);
        expect(res.body.code, query).toBe('invalid_cursor');
      }
    });

    it('refuses an unknown status and an empty, repeated or over-long customer with 400 invalid_request naming the field', async () => {
      for (const [query, field] of [
        ['status=shipped', 'status'],
        ['status=paid&status=PAID', 'status'],
        ['status=', 'status'],
        ['customer=', 'customer'],
        ['customer=a&customer=b', 'customer'],
        [`customer=${'c'.repeat(101)}`, 'customer'],
        ['status=paid,pending', 'status'],
      ] as const) {
        const res = await call(base, `/api/orders?${query}`, { key: reader });
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.body, query).toMatchObject({ code: 'invalid_request', field });
      }
      const unknown = await call(base, '/api/orders?status=shipped', { key: reader });
      expect(unknown.body.detail).toContain('`paid`, `pending`, `refunded`, `cancelled`');
    });

    it('quotes no key text when a refused status, sort or Content-Type is (a mistyped) key: the detail was cut before redaction', async () => {
      // A checksum-valid key in the query is api_key_in_query; a mistyped one (or another
      // environment's) reaches the parser, whose detail quoted 40 characters: 30 secret ones.
      const secret = reader.slice(-38);
      const typo = `${reader.slice(0, -1)}${reader.endsWith('x') ? 'y' : 'x'}`;
      const refused = [
        await call(base, `/api/orders?status=${typo}`, { key: reader }),
        await call(base, `/api/orders?status=paid&status=x${typo}`, { key: reader }),
        await call(base, `/api/orders?sort=amountCents,-${typo}`, { key: reader }),
        await call(base, `/api/orders?sort=--${typo}`, { key: reader }),
        await call(base, '/api/keys', { key: admin, method: 'POST', body: '{}', headers: { 'content-type': `application/vnd.example_${typo}` } }),
      ];
      for (const res of refused) {
        expect(res.status, res.text).toBe(400);
        // Case-folded too: the Content-Type detail quotes the media type lowercased.
        for (let i = 0; i + 8 <= secret.length; i++) expect(res.text.toLowerCase()).not.toContain(secret.slice(i, i + 8).toLowerCase());
      }
      for (const line of t.logs) expect(line).not.toContain(secret.slice(0, 16));
    });

    it('needs a key with orders:read, in the header only', async () => {
      const none = await call(base, '/api/orders');
      expect(none.status).toBe(401);
      expect(none.body.code).toBe('missing_api_key');
      expect(none.headers.get('www-authenticate')).toBe('ApiKey realm="orders-api"');
      expect((await call(base, '/api/orders', { key: `${reader.slice(0, -1)}${reader.endsWith('x') ? 'y' : 'x'}` })).body.code).toBe('invalid_api_key');
      const adminOnly = await call(base, '/api/orders', { key: admin });
      expect(adminOnly.status).toBe(403);
      expect(adminOnly.body).toMatchObject({ code: 'insufficient_scope', missing_scopes: ['orders:read'] });
      const inQuery = await call(base, `/api/orders?api_key=${reader}`, { key: reader });
      expect(inQuery.status).toBe(400);
      expect(inQuery.body.code).toBe('api_key_in_query');
    });
  });

  describe('GET /api/reports/daily', () => {
    it('matches a SQL aggregate for a seeded day', async () => {
      const { rows: days } = await t.api.db.query<{ day: string }>(
        `SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day FROM orders
         GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
      );
      const date = days[0]!.day;
      const { rows } = await t.api.db.query<{ currency: string; n: string; paid: string; revenue: string; avg: string | null }>(
        `SELECT currency, count(*)::text AS n, count(*) FILTER (WHERE status = 'paid')::text AS paid,
                coalesce(sum(amount_cents) FILTER (WHERE status = 'paid'), 0)::text AS revenue,
                round(avg(amount_cents) FILTER (WHERE status = 'paid'))::text AS avg
         FROM orders WHERE to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') = $1
         GROUP BY currency ORDER BY currency`,
        [date],
      );
      const res = await call(base, `/api/reports/daily?date=${date}`, { key: reader });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        date,
        orderCount: rows.reduce((n, r) => n + Number(r.n), 0),
        currencies: rows.map((r) => ({
          currency: r.currency,
          orderCount: Number(r.n),
          paidCount: Number(r.paid),
          revenueCents: Number(r.revenue),
          averageCents: r.avg === null ? null : Number(r.avg),
        })),
      });
      expect(res.body.orderCount).toBeGreaterThan(0);
    });

    it('defaults to today (UTC) and reports an empty day as zero', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const res = await call(base, '/api/reports/daily', { key: reader });
      expect(res.status).toBe(200);
      expect(res.body.date).toBe(today);
      const empty = await call(base, '/api/reports/daily?date=1999-12-31', { key: reader });
      expect(empty.body).toEqual({ date: '1999-12-31', orderCount: 0, currencies: [] });
    });

    it.each(['2024-02-30', '2023-02-29', '2024-13-01', '2024-1-1', '20240101', 'today', '2024-01-01T00:00:00Z', '0000-01-01', ''])(
      'refuses date=%j with 400 invalid_request naming the field',
      async (date) => {
        const res = await call(base, `/api/reports/daily?date=${encodeURIComponent(date)}`, { key: reader });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', field: 'date' });
      },
    );

    it('refuses a repeated date and accepts 29 February of a leap year', async () => {
      const twice = await call(base, '/api/reports/daily?date=2024-01-01&date=2024-01-02', { key: reader });
      expect(twice.body).toMatchObject({ code: 'invalid_request', field: 'date' });
      expect((await call(base, '/api/reports/daily?date=2024-02-29', { key: reader })).status).toBe(200);
    });

    it('needs reports:read', async () => {
      const ordersOnly = (await issue({ name: 'orders only', scopes: ['orders:read'] })).key;
      const res = await call(base, '/api/reports/daily', { key: ordersOnly });
      expect(res.status).toBe(403);
      expect(res.body.missing_scopes).toEqual(['reports:read']);
    });
  });

  describe('/api/keys', () => {
    it('runs a key through issue, get, list, rotate with overlap, and revoke', async () => {
      const created = await issue({ name: 'lifecycle', scopes: ['orders:read'], rateLimit: { limit: 50, windowSeconds: 10 } });
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^key_/),
        name: 'lifecycle',
        scopes: ['orders:read'],
        rateLimit: { limit: 50, windowSeconds: 10 },
        lastUsedAt: null,
        expiresAt: null,
        revokedAt: null,
        secrets: [{ last4: created.key.slice(-4), lastUsedAt: null, expiresAt: null }],
      });
      expect(created.body.createdAt).toMatch(/Z$/);
      expect(JSON.stringify(created.body)).not.toMatch(/digest/i);
      expect((await call(base, '/api/orders?limit=1', { key: created.key })).status).toBe(200);

      const got = await call(base, `/api/keys/${created.id}`, { key: admin });
      expect(got.status).toBe(200);
      expect(got.body).not.toHaveProperty('key');
      expect(got.body.secrets).toHaveLength(1);
      expect(got.text).not.toContain(created.key);

      // The list pages like every collection; walk it one key per page.
      const ids: string[] = [];
      let url: string | null = '/api/keys?limit=1';
      while (url !== null) {
        const page = await call(base, url, { key: admin });
        expect(page.status).toBe(200);
        expect(page.text).not.toMatch(/digest|ks_live_/);
        ids.push(...page.body.items.map((k: any) => k.id));
        url = nextLink(page.headers);
      }
      expect(ids).toContain(created.id);
      expect(new Set(ids).size).toBe(ids.length);
      const offsetPage = await call(base, '/api/keys?offset=0&limit=100', { key: admin });
      expect(offsetPage.body.total).toBe(ids.length);

      const rotated = await call(base, `/api/keys/${created.id}/rotate`, { key: admin, method: 'POST', body: { overlapSeconds: 3600 } });
      expect(rotated.status, rotated.text).toBe(201);
      issued.push(rotated.body.key);
      expect(rotated.body.id).toBe(created.id);
      expect(rotated.body.key).not.toBe(created.key);
      expect(rotated.body.secrets).toHaveLength(2);
      expect(rotated.body.secrets[0].last4).toBe(rotated.body.key.slice(-4));
      const overlapEnd = Date.parse(rotated.body.secrets[1].expiresAt) - Date.now();
      expect(overlapEnd).toBeGreaterThan(3590_000);
      expect(overlapEnd).toBeLessThanOrEqual(3600_000);
      expect((await call(base, '/api/orders?limit=1', { key: created.key })).status).toBe(200);
      expect((await call(base, '/api/orders?limit=1', { key: rotated.body.key })).status).toBe(200);

      const immediate = await call(base, `/api/keys/${created.id}/rotate`, { key: admin, method: 'POST', body: { overlapSeconds: 0 } });
      expect(immediate.status).toBe(201);
      issued.push(immediate.body.key);
      expect((await call(base, '/api/orders?limit=1', { key: rotated.body.key })).status).toBe(401);
      expect((await call(base, '/api/orders?limit=1', { key: immediate.body.key })).status).toBe(200);

      const revoked = await call(base, `/api/keys/${created.id}`, { key: admin, method: 'DELETE' });
      expect(revoked.status).toBe(204);
      expect(revoked.text).toBe('');
      const after = await call(base, '/api/orders?limit=1', { key: immediate.body.key });
      expect(after.status).toBe(401);
      expect(after.body.code).toBe('invalid_api_key');
      expect((await call(base, `/api/keys/${created.id}`, { key: admin })).body.revokedAt).toEqual(expect.any(String));
      expect((await call(base, `/api/keys/${created.id}/rotate`, { key: admin, method: 'POST', body: { overlapSeconds: 0 } })).status).toBeGreaterThanOrEqual(400);
    });

    it.each([
      ['GET', '/api/keys/key_doesnotexist000000000', undefined],
      ['GET', '/api/keys/nonsense', undefined],
      ['POST', '/api/keys/key_doesnotexist000000000/rotate', { overlapSeconds: 60 }],
      ['DELETE', '/api/keys/key_doesnotexist000000000', undefined],
    ] as const)('%s %s → 404 not_found', async (method, path, body) => {
      const res = await call(base, path, { key: admin, method, body });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('not_found');
    });

    it.each([
      ['malformed JSON', '{"name":', 'application/json', 'body'],
      ['a JSON array', '[]', 'application/json', 'body'],
      ['an empty body', '', 'application/json', 'body'],
      ['a form post', 'name=x&scopes=orders:read', 'application/x-www-form-urlencoded', 'body'],
      ['a missing name', '{"scopes":["orders:read"]}', 'application/json', 'name'],
      ['an unknown scope', '{"name":"x","scopes":["orders:write"]}', 'application/json', 'scopes'],
      ['scopes that are not a list', '{"name":"x","scopes":"orders:read"}', 'application/json', 'scopes'],
      // An unknown member is named by the object holding it: its name is client text.
      ['an unknown field', '{"name":"x","scopes":["orders:read"],"scope":"x"}', 'application/json', 'body'],
      ['a bad rate limit', '{"name":"x","scopes":["orders:read"],"rateLimit":{"limit":0,"windowSeconds":1}}', 'application/json', 'rateLimit.limit'],
      ['a bad window', '{"name":"x","scopes":["orders:read"],"rateLimit":{"limit":1,"windowSeconds":"1"}}', 'application/json', 'rateLimit.windowSeconds'],
      ['a past expiry', '{"name":"x","scopes":["orders:read"],"expiresAt":"2001-01-01T00:00:00Z"}', 'application/json', 'expiresAt'],
      ['an impossible expiry', '{"name":"x","scopes":["orders:read"],"expiresAt":"2099-02-30T00:00:00Z"}', 'application/json', 'expiresAt'],
    ])('POST /api/keys with %s → 400 naming %s', async (_label, body, contentType, field) => {
      const res = await call(base, '/api/keys', { key: admin, method: 'POST', body, headers: { 'content-type': contentType } });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', field });
    });

    it('issues a key with metadata and an IP allowlist, returns them, and PATCH replaces them', async () => {
      const res = await call(base, '/api/keys', {
        key: admin,
        method: 'POST',
        body: JSON.stringify({ name: 'tenant', scopes: ['orders:read'], metadata: { tenant: 't_42', plan: { tier: 'pro' } }, ipAllowlist: ['127.0.0.0/8', '::1'] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).toBe(201);
      issued.push(res.body.key);
      expect(res.body).toMatchObject({ metadata: { tenant: 't_42', plan: { tier: 'pro' } }, ipAllowlist: ['127.0.0.0/8', '::1/128'], environment: expect.any(String) });
      // The test talks over loopback: the allowlist lets it in.
      expect((await call(base, '/api/orders?limit=1', { key: res.body.key })).status).toBe(200);
      const patched = await call(base, `/api/keys/${res.body.id}`, {
        key: admin,
        method: 'PATCH',
        body: JSON.stringify({ ipAllowlist: ['203.0.113.0/24'] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body).toMatchObject({ metadata: { tenant: 't_42' }, ipAllowlist: ['203.0.113.0/24'] });
      const refused = await call(base, '/api/orders?limit=1', { key: res.body.key });
      expect([refused.status, refused.body.code]).toEqual([403, 'ip_not_allowed']);
      for (const [body, field] of [['{}', 'body'], ['{"ipAllowlist":["10.0.0.1/8"]}', 'ipAllowlist'], ['{"metadata":[1]}', 'metadata'], ['{"name":"x"}', 'body']] as const) {
        const bad = await call(base, `/api/keys/${res.body.id}`, { key: admin, method: 'PATCH', body, headers: { 'content-type': 'application/json' } });
        expect([bad.status, bad.body.field], body).toEqual([400, field]);
      }
      const unknownEnv = await call(base, '/api/keys', { key: admin, method: 'POST', body: '{"name":"x","scopes":["orders:read"],"environment":"nope"}', headers: { 'content-type': 'application/json' } });
      expect([unknownEnv.status, unknownEnv.body.field]).toEqual([400, 'environment']);
    });

    it('refuses a bad rotate body and an oversized body without a 500', async () => {
      const { id } = await issue({ name: 'rotate-bodies', scopes: ['orders:read'] });
      for (const body of ['{}', '{"overlapSeconds":-1}', '{"overlapSeconds":1.5}', '{"overlapSeconds":"60"}', '{"overlapSeconds":99999999}']) {
        const res = await call(base, `/api/keys/${id}/rotate`, { key: admin, method: 'POST', body, headers: { 'content-type': 'application/json' } });
        expect(res.status, body).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', field: 'overlapSeconds' });
      }
      const huge = JSON.stringify({ name: 'x'.repeat(40_000), scopes: ['orders:read'] });
      const res = await call(base, '/api/keys', { key: admin, method: 'POST', body: huge, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('invalid_request');
    });

    it('reads a body as UTF-8 whatever its charset parameter, and refuses a content-coded body with 400 naming body', async () => {
      // RFC 8259 §8.1 and §11: JSON is UTF-8 and a charset parameter has no effect.
      const text = JSON.stringify({ name: 'Zürich ops', scopes: ['orders:read'] });
      for (const charset of ['latin1', 'bogus']) {
        const res = await call(base, '/api/keys', { key: admin, method: 'POST', body: text, headers: { 'content-type': `application/json; charset=${charset}` } });
        expect(res.status, `${charset}: ${res.text}`).toBe(201);
        issued.push(res.body.key);
        expect(res.body.name).toBe('Zürich ops');
      }
      // Neither server decodes content codings: the same answer on both, whatever the bytes.
      for (const [encoding, body] of [['gzip', text], ['gzip', 'not gzip'], ['br2', text]]) {
        const res = await call(base, '/api/keys', { key: admin, method: 'POST', body, headers: { 'content-type': 'application/json', 'content-encoding': encoding! } });
        expect(res.status, `${encoding}: ${res.text}`).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', field: 'body' });
      }
      const identity = await call(base, '/api/keys', { key: admin, method: 'POST', body: text, headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } });
      expect(identity.status, identity.text).toBe(201);
      issued.push(identity.body.key);
    });

    it('accepts an expiry and a per-key rate limit, enforced with 429 and Retry-After', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const { key, body } = await issue({ name: 'slow', scopes: ['orders:read'], rateLimit: { limit: 2, windowSeconds: 60 }, expiresAt });
      expect(body.expiresAt).toBe(expiresAt);
      expect((await call(base, '/api/orders?limit=1', { key })).status).toBe(200);
      expect((await call(base, '/api/orders?limit=1', { key })).status).toBe(200);
      const limited = await call(base, '/api/orders?limit=1', { key });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('ratelimit-policy')).toContain('q=2');
    });

    it('several named limits and a quota: concurrent requests spend at most the credits, exactly; PATCH sets remaining and the refill', async () => {
      const { key, id, body } = await issue({
        name: 'metered',
        scopes: ['orders:read', 'reports:read'],
        rateLimits: [
          { name: 'second', limit: 1000, windowSeconds: 1 },
          { name: 'day', limit: 100_000, windowSeconds: 86_400 },
        ],
        quota: { remaining: 23 },
      });
      expect(body.quota).toMatchObject({ remaining: 23, refill: null, nextRefillAt: null });
      // Orders cost 1, a daily report 5 (ROUTE_COSTS): 30 concurrent requests want 70 credits.
      const paths = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? '/api/reports/daily' : '/api/orders?limit=1'));
      const replies = await Promise.all(paths.map((path) => call(base, path, { key })));
      const cost = (path: string): number => (path.startsWith('/api/reports') ? 5 : 1);
      const spent = replies.reduce((sum, r, i) => sum + (r.status === 200 ? cost(paths[i]!) : 0), 0);
      expect(replies.every((r) => r.status === 200 || (r.status === 429 && r.body.code === 'quota_exhausted'))).toBe(true);
      expect(spent).toBeLessThanOrEqual(23);
      const live = (await call(base, `/api/keys/${id}`, { key: admin })).body.quota.remaining;
      expect(live).toBe(23 - spent);
      replies.forEach((r, i) => {
        if (r.status === 429) {
          expect(cost(paths[i]!)).toBeGreaterThan(live);
          expect(r.headers.get('retry-after')).toBeNull(); // no refill: waiting does not help
        }
      });
      expect(replies[1]!.headers.get('ratelimit-policy')).toBe('"second";q=1000;w=1, "day";q=100000;w=86400');

      const set = await call(base, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { quota: { remaining: 10, refill: { amount: 10, interval: 'daily' } } } });
      expect(set.status, set.text).toBe(200);
      const midnight = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
      expect(set.body.quota).toMatchObject({ remaining: 10, refill: { amount: 10, interval: 'daily' }, nextRefillAt: midnight });
      expect((await call(base, '/api/reports/daily', { key })).status).toBe(200);
      // Only the refill changes: the live count (5) is kept.
      const refill = await call(base, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { quota: { refill: { amount: 50, interval: 'monthly' } } } });
      expect(refill.body.quota).toMatchObject({ remaining: 5, refill: { amount: 50, interval: 'monthly' } });
      const exhausted = await call(base, '/api/reports/daily', { key });
      expect((await call(base, '/api/reports/daily', { key })).body).toMatchObject({ code: 'quota_exhausted', quota_remaining: 0, cost: 5 });
      expect(exhausted.status).toBe(200);
      const bad = await call(base, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { quota: { remaining: -1 } } });
      expect([bad.status, bad.body.field]).toEqual([400, 'quota.remaining']);
      const unknown = await call(base, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { quota: { remaining: 1, extra: 1 } } });
      expect(unknown.status).toBe(400);
      const limits = await call(base, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { rateLimits: null, quota: null } });
      expect([limits.body.rateLimits, limits.body.quota]).toEqual([null, null]);
    });

    it('needs keys:admin', async () => {
      const res = await call(base, '/api/keys', { key: reader, method: 'POST', body: { name: 'x', scopes: ['keys:admin'] } });
      expect(res.status).toBe(403);
      expect(res.body.missing_scopes).toEqual(['keys:admin']);
    });
  });

  it.each([
    ['POST', '/api/orders', 'GET, HEAD'],
    ['DELETE', '/api/orders', 'GET, HEAD'],
    ['PUT', '/api/keys', 'GET, HEAD, POST'],
    ['PUT', '/api/keys/key_doesnotexist000000000', 'GET, HEAD, PATCH, DELETE'],
    ['GET', '/api/keys/key_x/limits', 'PATCH'],
    ['GET', '/api/keys/key_x/rotate', 'POST'],
  ] as const)('%s %s → 405 method_not_allowed with Allow: %s', async (method, path, allow) => {
    const res = await call(base, path, { key: reader, method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', allowed_methods: allow.split(', ') });
  });

  it('authenticates before it reads a body, on every route that takes one', async () => {
    const bad = { body: '{"name":', headers: { 'content-type': 'application/json' } };
    for (const path of ['/api/keys', '/api/keys/key_00000000000000000000000000/rotate']) {
      const anonymous = await call(base, path, { method: 'POST', ...bad });
      expect([anonymous.status, anonymous.body.code], path).toEqual([401, 'missing_api_key']);
      const wrongKey = await call(base, path, { method: 'POST', key: 'nope', ...bad });
      expect([wrongKey.status, wrongKey.body.code], path).toEqual([401, 'invalid_api_key']);
      const noScope = await call(base, path, { method: 'POST', key: reader, ...bad });
      expect([noScope.status, noScope.body.code], path).toEqual([403, 'insufficient_scope']);
    }
    const admitted = await call(base, '/api/keys', { method: 'POST', key: admin, ...bad });
    expect([admitted.status, admitted.body.code]).toEqual([400, 'invalid_request']);
  });

  it('answers unknown paths with a 404 problem', async () => {
    const res = await call(base, '/api/nope', { key: reader });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('logs requests as JSON with key id and last 4, never a key or an Authorization header', async () => {
    await call(base, `/api/orders?limit=1&api_key=${reader}`, { key: reader });
    await call(base, '/api/orders?limit=1', { key: reader, headers: { cookie: 'session=secret-cookie' } });
    const lines = t.logs.map((l) => JSON.parse(l) as Record<string, any>);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThan(20);
    const ok = requests.find((l) => l.res.statusCode === 200 && l.req.url.startsWith('/api/orders'));
    expect(ok).toMatchObject({ req: { method: 'GET' }, key: { id: expect.stringMatching(/^key_/), last4: reader.slice(-4) } });
    expect(typeof ok!.responseTime).toBe('number');
    const inQuery = requests.find((l) => l.req.url.includes('api_key='));
    expect(inQuery!.req.url).toContain(`api_key=…${reader.slice(-4)}`);
    const refused = requests.find((l) => l.auth?.reason === 'checksum');
    expect(refused).toBeDefined();
    const all = t.logs.join('\n');
    for (const key of issued) expect(all).not.toContain(key);
    expect(all).not.toContain('secret-cookie');
    expect(all.toLowerCase()).not.toContain('apikey ks_');
  });

  it('never echoes a key in a log line or a problem body, whatever stands around it', async () => {
    const victim = (await issue({ name: 'victim', scopes: ['orders:read'] })).key;
    const from = t.logs.length;
    const replies = [
      await call(base, `/api/orders?q=${victim}x`, { key: reader }), // 400 api_key_in_query
      await call(base, `/api/orders?x${victim}=1`, { key: reader }),
      await call(base, `/api/orders/${victim}x`, { key: reader }), // 404
      await call(base, `/api/orders/z${victim}`, { key: reader }),
      await call(base, `/api/orders/${encodeURIComponent(victim).replace(/[A-Z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}`, { key: reader }),
      await call(base, `/api/keys/${victim}`), // 401, no credentials
      await call(base, `/api/keys/${victim}x`, { key: admin }), // 404
      await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'n', scopes: [victim] } }),
      await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'n', scopes: [`${victim}x`] } }),
      await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'n', scopes: ['orders:read'], [victim]: 1 } }),
      await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: victim, scopes: ['orders:read'], expiresAt: victim } }),
      await call(base, `/api/reports/daily?date=${victim}`, { key: reader }),
    ];
    expect(replies.map((r) => r.status).every((status) => status >= 400 && status < 500)).toBe(true);
    const secret = victim.slice(victim.lastIndexOf('_') + 1);
    const output = [...replies.map((r) => r.text), ...t.logs.slice(from)].join('\n');
    for (let i = 0; i + 8 <= secret.length; i++) expect(output).not.toContain(secret.slice(i, i + 8));
  });
});
