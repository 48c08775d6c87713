/**
 * The walk properties over any SQL source: one database reached through one query
 * builder (raw `keysetWhere` text, Kysely, Drizzle). Built on the fixtures of
 * `walk.test-support.ts` (datasets with heavy ties, random sort specs, the independent
 * reference order, the client-like walkers); a source only says how to store, fetch and
 * count rows. Rows are checked by id against the generated items, so a database may
 * return its own spelling of a value (`1.50`, a zone-less DATETIME) as long as it
 * orders like the reference.
 * Test fixture only: not exported, not built.
 * @module
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { createPaginator } from './paginator.ts';
import type { PagePlan, SortKey, SortSpec } from './types.ts';
import { checkBackwardStatic, checkBothWaysConcurrent } from './backward-walks.test-support.ts';
import { datasetArbitrary, newItem, referenceCompare, sortArbitrary, TIMESTAMPS, walkCursor, walkOffset, type Item } from './walk.test-support.ts';

/** One table `items` (columns as in `ITEMS_DDL`) in one database, through one builder. */
export interface WalkSource {
  /** Deletes every row. */
  clear(): Promise<void>;
  insert(items: readonly Item[], tenant: number): Promise<void>;
  remove(id: string): Promise<void>;
  /**
   * The page `plan` asks for, of tenant 1 only, as rows the paginator reads: `id` as
   * text, `flag` a boolean, `createdAt` and `score` as the database spells them.
   */
  fetch(plan: PagePlan, sort: SortSpec): Promise<Item[]>;
  /** Rows of tenant 1 (offset mode's `total`). */
  count(): Promise<number>;
}

const SECRET = 'a-dialect-walk-test-secret-of-at-least-32-bytes';
const paginatorFor = (sort: SortKey[]) =>
  createPaginator<Item>({ endpoint: 'GET /items', sort, limits: { max: 10 }, cursor: { secrets: [SECRET] } });

/** Rows of another tenant, between and around tenant 1's: they must never show up. */
const OTHER_TENANT: readonly Item[] = TIMESTAMPS.map((t, i) => ({
  id: String(2n ** 53n + 5000n + BigInt(i)),
  createdAt: t.text,
  grp: i % 3,
  score: null,
  label: 'a',
  flag: true,
}));

async function reset(source: WalkSource, items: readonly Item[]): Promise<void> {
  await source.clear();
  if (items.length > 0) await source.insert(items, 1);
  await source.insert(OTHER_TENANT, 2);
}

/**
 * Fixture timestamps a database without PostgreSQL's range (MySQL `DATETIME(6)`:
 * 1000–9999, no infinity) stores instead, in the same order; the others stay the
 * same instant, microseconds included.
 */
const CLAMPED: ReadonlyMap<string, bigint> = new Map([
  ['-infinity', -30_610_224_000_000_000n],
  ['0044-03-15 12:00:00+00 BC', -30_610_224_000_000_000n + 1n],
  ['10000-01-01 00:00:00+00', 253_402_300_799_999_999n - 1n],
  ['infinity', 253_402_300_799_999_999n],
]);
const MICROS = new Map(TIMESTAMPS.map((t) => [t.text, t.micros]));

/**
 * A fixture timestamp as a MySQL `DATETIME(6)` literal (`'mysql'`, UTC, zone-less) or as
 * fixed-width ISO 8601 text that sorts as text (`'iso'`, for SQLite's TEXT columns).
 */
export function timestampText(text: string, style: 'mysql' | 'iso'): string {
  const micros = CLAMPED.get(text) ?? MICROS.get(text);
  if (micros === undefined) throw new Error(`fixture timestamp not in the table: ${text}`);
  const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n);
  const fraction = String(micros - seconds * 1_000_000n).padStart(6, '0');
  const iso = new Date(Number(seconds) * 1000).toISOString();
  return style === 'mysql' ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${fraction}` : `${iso.slice(0, 19)}.${fraction}Z`;
}

/** What a walk draws beyond the shared fixtures. */
export interface WalkOptions {
  /** Decimals with more digits than a double holds (`WIDE_SCORES`): engines with exact decimals only. */
  wideDecimals?: boolean;
}

/** Static dataset: cursor walk = reference order = offset walk. */
export async function staticWalk(source: WalkSource, numRuns: number, options: WalkOptions = {}): Promise<void> {
  await fc.assert(
    fc.asyncProperty(datasetArbitrary(40, options.wideDecimals), sortArbitrary(), fc.integer({ min: 1, max: 10 }), fc.nat(), async (rows, sort, limit, k) => {
      await reset(source, rows);
      const paginator = paginatorFor(sort);
      const expected = [...rows].sort(referenceCompare(sort)).map((r) => r.id);
      const byCursor = await walkCursor(paginator, (plan) => source.fetch(plan, paginator.sort), limit);
      expect(byCursor.map((r) => r.id)).toEqual(expected);
      const byOffset = await walkOffset(paginator, async (plan) => ({ rows: await source.fetch(plan, paginator.sort), total: await source.count() }), limit);
      expect(byOffset.map((r) => r.id)).toEqual(expected);
      await checkBackwardStatic(paginator, (plan) => source.fetch(plan, plan.sort), limit, k);
    }),
    { numRuns },
  );
}

/** Inserts and deletes between pages, forward then back: rows present throughout appear once, in order. */
export async function concurrentWalk(source: WalkSource, numRuns: number, options: WalkOptions = {}): Promise<void> {
  await fc.assert(
    fc.asyncProperty(datasetArbitrary(40, options.wideDecimals), sortArbitrary(), fc.integer({ min: 1, max: 6 }), fc.infiniteStream(fc.nat()), async (initial, sort, limit, randomness) => {
      await reset(source, initial);
      const paginator = paginatorFor(sort);
      const random = randomness[Symbol.iterator]();
      const pick = (k: number): number => (random.next().value as number) % k;
      const byId = new Map(initial.map((r) => [r.id, r]));
      const live = initial.map((r) => r.id);
      let inserted = 0;
      await checkBothWaysConcurrent(paginator, sort, limit, {
        fetch: (plan) => source.fetch(plan, plan.sort),
        ids: async () => [...live],
        // Order by the generated values: the database's spelling of them does not matter.
        original: (row) => byId.get(row.id)!,
        mutate: async () => {
          const gone: string[] = [];
          for (let n = pick(3); n > 0 && live.length > 0; n--) {
            const [id] = live.splice(pick(live.length), 1);
            gone.push(id!);
            await source.remove(id!);
          }
          const fresh = Array.from({ length: pick(3) }, () => newItem(inserted++, pick, options.wideDecimals));
          if (fresh.length > 0) await source.insert(fresh, 1);
          for (const r of fresh) {
            byId.set(r.id, r);
            live.push(r.id);
          }
          return gone;
        },
      });
    }),
    { numRuns },
  );
}
