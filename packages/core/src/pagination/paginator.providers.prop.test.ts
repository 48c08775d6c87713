/**
 * The paginator on node:crypto (whose HMAC answers at once, the next page's cursor signed
 * from values checked once) against the same paginator on Web Crypto, where every HMAC
 * is a promise: on random walks, forward and
 * backward, over sort types that take either encode path (timestamps and ints; bigints
 * and decimals, re-checked), with tampered and foreign cursors, both give the same plans,
 * the same bodies and headers (cursor text included), or the same problem.
 * Failures print a seed and path: replay with fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { webCrypto } from '../crypto/crypto.web.ts';
import { toProblem } from '../errors.ts';
import { paginateArray } from './paginate-array.ts';
import { createPaginator, type PageResult, type Paginator } from './paginator.ts';
import type { PagePlan, SortKey } from './types.ts';

const SECRET = 'provider-test-secret-0123456789abcdef0';
const T0 = Date.UTC(2026, 0, 1);
const URL_ = 'https://api.test/api/orders?status=paid&limit=3';

interface Row {
  at: string;
  n: number;
  big: bigint;
  price: string;
}

const rows: Row[] = Array.from({ length: 40 }, (_, i) => ({
  // Ties in the leading key, microseconds, years past 9999 and BC.
  at: i % 13 === 0 ? `10000-01-01 00:00:0${i % 10}.${String(i).padStart(6, '0')}+00` : i % 11 === 0 ? `0044-03-15 12:00:00+00 BC` : `2026-01-0${1 + (i % 5)}T10:00:00.00000${i % 3}Z`,
  n: i,
  big: 2n ** 62n + BigInt(i),
  price: `${i % 7}.${i}`,
}));

const specs: SortKey[][] = [
  [
    { key: 'at', dir: 'desc', type: 'timestamp' },
    { key: 'n', dir: 'desc', type: 'int', unique: true },
  ],
  [
    { key: 'price', dir: 'asc', type: 'decimal' },
    { key: 'big', dir: 'desc', type: 'bigint', unique: true },
  ],
];

type Outcome<T> = { ok: true; value: T } | { ok: false; problem: unknown };

async function settle<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, problem: toProblem(error) };
  }
}

const strip = (plan: PagePlan) => ({ ...plan, sort: plan.sort.map((k) => k.key) });

describe('paginator: node:crypto answers as Web Crypto', () => {
  it('same plans, pages and problems on random walks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 1),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.record({ take: fc.constantFrom('next', 'prev', 'first', 'tamper', 'junk'), at: fc.nat(200) }), { minLength: 1, maxLength: 10 }),
        async (specIndex, limit, moves) => {
          const sort = specs[specIndex]!;
          const make = (crypto: typeof nodeCrypto) =>
            createPaginator<Row>({ endpoint: 'GET /api/orders', sort, cursor: { secrets: [SECRET] }, crypto, clock: () => T0 });
          const node: Paginator<Row> = make(nodeCrypto);
          const web: Paginator<Row> = make(webCrypto);
          let query = `limit=${limit}`;
          for (const move of moves) {
            const params = new URLSearchParams(query);
            const a = await settle(() => node.plan(params, { filters: { status: 'paid' } }));
            const b = await settle(() => web.plan(params, { filters: { status: 'paid' } }));
            expect(a.ok ? { ok: true, value: strip(a.value) } : a).toEqual(b.ok ? { ok: true, value: strip(b.value) } : b);
            if (!a.ok || !b.ok) {
              query = `limit=${limit}`;
              continue;
            }
            const fetched = paginateArray(rows, a.value, node.sort).rows;
            const pa = await settle<PageResult<Row>>(() => node.page(a.value, fetched, { url: URL_ }));
            const pb = await settle<PageResult<Row>>(() => web.page(b.value, fetched, { url: URL_ }));
            expect(pa).toEqual(pb);
            if (!pa.ok) continue;
            const body = pa.value.body as { nextCursor: string | null; prevCursor: string | null };
            const cursor = move.take === 'next' ? body.nextCursor : move.take === 'prev' ? body.prevCursor : body.nextCursor ?? body.prevCursor;
            if (move.take === 'first' || cursor === null) query = `limit=${limit}`;
            else if (move.take === 'tamper') query = `limit=${limit}&cursor=${cursor.slice(0, move.at % cursor.length)}${cursor[move.at % cursor.length] === 'A' ? 'B' : 'A'}${cursor.slice((move.at % cursor.length) + 1)}`;
            else if (move.take === 'junk') query = `limit=${limit}&cursor=${'x'.repeat(1 + (move.at % 90))}`;
            else query = `limit=${limit}&cursor=${cursor}`;
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it('pages planned and signed at once on one paginator each get their own cursors, under a secret rotation', async () => {
    // The codec reuses one buffer for every cursor; requests interleave at every await.
    // Each walk must still read back the position its own page ended on, whichever secret
    // verifies it (the newest signs, the older one is tried second).
    for (const crypto of [nodeCrypto, webCrypto]) {
      const older = createPaginator<Row>({ endpoint: 'GET /api/orders', sort: specs[0]!, cursor: { secrets: [`older-${SECRET}`] }, crypto });
      const paginator = createPaginator<Row>({ endpoint: 'GET /api/orders', sort: specs[0]!, cursor: { secrets: [SECRET, `older-${SECRET}`] }, crypto });
      const limits = Array.from({ length: 12 }, (_, i) => 1 + (i % 6));
      const walks = await Promise.all(
        limits.map(async (limit, i) => {
          const signer = i % 2 === 0 ? paginator : older;
          const plan = await signer.plan(new URLSearchParams(`limit=${limit}`));
          const { body } = await signer.page(plan, paginateArray(rows, plan, signer.sort).rows, { url: URL_ });
          const next = await paginator.plan(new URLSearchParams(`limit=${limit}&cursor=${(body as { nextCursor: string }).nextCursor}`));
          return { limit, after: (next as PagePlan & { after: unknown }).after };
        }),
      );
      const ordered = paginateArray(rows, await paginator.plan(new URLSearchParams('limit=100')), paginator.sort).rows;
      for (const { limit, after } of walks) {
        const last = ordered[limit - 1]!;
        expect(after).toEqual([expect.any(String), last.n]);
      }
    }
  });

  it('a bigint row value past 400 digits is refused when its cursor is signed, as before', async () => {
    const sort = specs[1]!;
    const paginator = createPaginator<Row>({ endpoint: 'GET /api/orders', sort, cursor: { secrets: [SECRET] } });
    const plan = await paginator.plan(new URLSearchParams('limit=1'));
    const huge = { at: '2026-01-01T00:00:00Z', n: 1, big: 10n ** 401n, price: '1.5' };
    await expect(paginator.page(plan, [huge, huge], { url: URL_ })).rejects.toThrow(TypeError);
  });
});
