/**
 * Test fixtures shared by the pagination property tests (not exported, not built):
 * random datasets with heavy ties, random sort specs over them, an independent
 * reference order, and walkers that page through a source the way a client would.
 * No Node imports, so it typechecks with the runtime-neutral core.
 * @module
 */
import fc from 'fast-check';
import type { Paginator } from './paginator.ts';
import type { CursorPage, OffsetPage, PagePlan, SortKey } from './types.ts';

/** One row as the sources return it: database text for bigint, timestamp and numeric. */
export interface Item {
  id: string;
  createdAt: string;
  grp: number;
  score: string | null;
  label: string | null;
  flag: boolean;
}

// Values with their true order spelled out by hand, so the reference order below shares
// no code with the library: µs apart timestamps, equal decimals in two spellings.
export const TIMESTAMPS: readonly { text: string; micros: bigint }[] = [
  { text: '2024-05-01 10:00:00.000001+00', micros: 1_714_557_600_000_001n },
  { text: '2024-05-01 10:00:00.000002+00', micros: 1_714_557_600_000_002n },
  // Three more within that millisecond: a cursor through a JS Date (milliseconds) ties them all.
  { text: '2024-05-01 10:00:00.000003+00', micros: 1_714_557_600_000_003n },
  { text: '2024-05-01 10:00:00.0005+00', micros: 1_714_557_600_000_500n },
  { text: '2024-05-01 10:00:00.000999+00', micros: 1_714_557_600_000_999n },
  { text: '2024-05-01 10:00:00.999999+00', micros: 1_714_557_600_999_999n },
  { text: '2024-05-01 10:00:01+00', micros: 1_714_557_601_000_000n },
  { text: '1999-12-31 23:59:59.5+00', micros: 946_684_799_500_000n },
  // Everything else a timestamptz prints (epochs from PostgreSQL's `extract(epoch …)`).
  { text: '0044-03-15 12:00:00+00 BC', micros: -63_517_780_800_000_000n },
  { text: '10000-01-01 00:00:00+00', micros: 253_402_300_800_000_000n },
  { text: 'infinity', micros: 10n ** 30n },
  { text: '-infinity', micros: -(10n ** 30n) },
];
export const SCORES: readonly { text: string | null; hundredths: bigint | null }[] = [
  { text: null, hundredths: null },
  { text: '1.5', hundredths: 150n },
  { text: '1.50', hundredths: 150n },
  { text: '-0.25', hundredths: -25n },
  { text: '10', hundredths: 1000n },
  { text: '0', hundredths: 0n },
];
/**
 * Decimals with more digits than a double holds: all three are the same JS number, so a
 * walk that carried one as a number would tie them. For engines with exact decimals only
 * (a SQLite REAL column is a double itself).
 */
export const WIDE_SCORES: readonly { text: string; hundredths: bigint }[] = [
  { text: '12345678901234567.01', hundredths: 1234567890123456701n },
  { text: '12345678901234567.02', hundredths: 1234567890123456702n },
  { text: '12345678901234567.03', hundredths: 1234567890123456703n },
];
export const LABELS: readonly (string | null)[] = [null, '', 'a', 'B', 'b', 'ab'];
const ID_BASE = 2n ** 53n - 40n;

const micros = new Map(TIMESTAMPS.map((t) => [t.text, t.micros]));
const hundredths = new Map([...SCORES, ...WIDE_SCORES].map((s) => [s.text, s.hundredths]));

/** Scores a dataset draws from: with `wide`, also {@link WIDE_SCORES}. */
const scoreTexts = (wide: boolean): (string | null)[] => [...SCORES, ...(wide ? WIDE_SCORES : [])].map((s) => s.text);

/** Builds the item with id `ID_BASE + n` (ids straddle 2^53). */
export function itemArbitrary(wide = false): fc.Arbitrary<Omit<Item, 'id'>> {
  return fc.record({
    createdAt: fc.constantFrom(...TIMESTAMPS.map((t) => t.text)),
    grp: fc.integer({ min: 0, max: 2 }),
    score: fc.constantFrom(...scoreTexts(wide)),
    label: fc.constantFrom(...LABELS),
    flag: fc.boolean(),
  });
}

export function datasetArbitrary(maxRows = 60, wide = false): fc.Arbitrary<Item[]> {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: 100 }), { maxLength: maxRows, size: 'max' })
    .chain((offsets) => fc.tuple(fc.constant(offsets), fc.array(itemArbitrary(wide), { minLength: offsets.length, maxLength: offsets.length })))
    .map(([offsets, items]) => items.map((item, i) => ({ id: String(ID_BASE + BigInt(offsets[i] as number)), ...item })));
}

/** A fresh item for concurrent inserts; ids from 1000 up never clash with the dataset. */
export function newItem(n: number, pick: (k: number) => number, wide = false): Item {
  const scores = scoreTexts(wide);
  return {
    id: String(ID_BASE + 1000n + BigInt(n)),
    createdAt: TIMESTAMPS[pick(TIMESTAMPS.length)]!.text,
    grp: pick(3),
    score: scores[pick(scores.length)]!,
    label: LABELS[pick(LABELS.length)]!,
    flag: pick(2) === 1,
  };
}

type Candidate = Omit<SortKey, 'dir' | 'nullable'> & { nullable: boolean };
const CANDIDATES: readonly Candidate[] = [
  { key: 'createdAt', column: 't.created_at', type: 'timestamp', nullable: false },
  { key: 'grp', column: 't.grp', type: 'int', nullable: false },
  { key: 'score', column: 't.score', type: 'decimal', nullable: true },
  { key: 'label', column: 't.label', type: 'string', nullable: true },
  { key: 'flag', column: 't.flag', type: 'boolean', nullable: false },
];

/** Random sort specs: up to three non-unique keys in any order and direction, then `id`. */
export function sortArbitrary(): fc.Arbitrary<SortKey[]> {
  const dir = fc.constantFrom('asc' as const, 'desc' as const);
  const nulls = fc.constantFrom('first' as const, 'last' as const);
  return fc
    .tuple(fc.shuffledSubarray([...CANDIDATES], { maxLength: 3 }), fc.array(fc.tuple(dir, nulls), { minLength: 4, maxLength: 4 }), dir)
    .map(([keys, dirs, idDir]) => [
      ...keys.map((c, i): SortKey => {
        const [d, n] = dirs[i]!;
        return { key: c.key, column: c.column as string, type: c.type, dir: d, nullable: c.nullable ? { nulls: n } : false };
      }),
      { key: 'id', column: 't.id', type: 'bigint', dir: idDir, unique: true },
    ]);
}

function rank(key: string, value: unknown): bigint | number | string | boolean | null {
  if (value === null) return null;
  if (key === 'id') return BigInt(value as string);
  if (key === 'createdAt') {
    const m = micros.get(value as string);
    if (m === undefined) throw new Error(`fixture timestamp not in the table: ${String(value)}`);
    return m;
  }
  if (key === 'score') return hundredths.get(value as string) as bigint;
  return value as number | string | boolean;
}

/** Independent reference comparator for {@link Item}s under `sort`. */
export function referenceCompare(sort: readonly SortKey[]): (a: Item, b: Item) => number {
  return (a, b) => {
    for (const k of sort) {
      const x = rank(k.key, a[k.key as keyof Item]);
      const y = rank(k.key, b[k.key as keyof Item]);
      if (x === y) continue;
      if (x === null || y === null) {
        const nullsFirst = k.nullable !== false && k.nullable?.nulls === 'first';
        return (x === null) === nullsFirst ? -1 : 1;
      }
      const c = x < y ? -1 : 1;
      return k.dir === 'asc' ? c : -c;
    }
    return 0;
  };
}

export const URL_BASE = 'https://api.example.com/items?tenant=1';

/** The targets of a `Link` header by relation type (the paginator writes one rel per link). */
export function parseLinks(header: string | undefined): Partial<Record<'next' | 'prev' | 'first', URL>> {
  const out: Partial<Record<'next' | 'prev' | 'first', URL>> = {};
  if (header === undefined) return out;
  for (const part of header.split(', ')) {
    const m = /^<([^>]+)>; rel="(next|prev|first)"$/.exec(part);
    if (m === null) throw new Error(`bad Link header part ${part}`);
    const rel = m[2] as 'next' | 'prev' | 'first';
    if (out[rel] !== undefined) throw new Error(`rel="${rel}" twice in ${header}`);
    out[rel] = new URL(m[1]!);
  }
  return out;
}

/** One page as a client saw it. */
export interface WalkedPage {
  items: Item[];
  nextCursor: string | null;
  prevCursor: string | null;
}

/**
 * Checks what a client relies on in a cursor page's `Link` header: `next` carries
 * `nextCursor`, `prev` carries `prevCursor`, `first` comes with `prev` and has no cursor,
 * and every link keeps the other parameters.
 */
function checkCursorLinks(page: CursorPage<Item>, link: string | undefined, sort: string | undefined): void {
  const links = parseLinks(link);
  const cursorOf = (u: URL | undefined): string | null | undefined => (u === undefined ? undefined : u.searchParams.get('cursor'));
  if ((cursorOf(links.next) ?? null) !== page.nextCursor) throw new Error(`rel="next" does not carry nextCursor: ${link}`);
  if ((cursorOf(links.prev) ?? null) !== page.prevCursor) throw new Error(`rel="prev" does not carry prevCursor: ${link}`);
  if ((links.first !== undefined) !== (page.prevCursor !== null)) throw new Error(`rel="first" must come with rel="prev": ${link}`);
  if (links.first !== undefined && links.first.searchParams.has('cursor')) throw new Error(`rel="first" has a cursor: ${link}`);
  for (const u of Object.values(links)) if (u.searchParams.get('tenant') !== '1') throw new Error(`Link lost a parameter: ${link}`);
  if (sort !== undefined) for (const u of Object.values(links)) if (u.searchParams.get('sort') !== sort) throw new Error(`Link lost sort: ${link}`);
}

async function fetchCursorPage(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  cursor: string | null,
  sort?: string,
): Promise<WalkedPage> {
  const url = new URL(URL_BASE);
  if (sort !== undefined) url.searchParams.set('sort', sort);
  url.searchParams.set('limit', String(limit));
  if (cursor !== null) url.searchParams.set('cursor', cursor);
  const plan = await paginator.plan(url.searchParams, { filters: { tenant: 1 } });
  const { body, headers } = await paginator.page(plan, await fetch(plan), { url });
  const page = body as CursorPage<Item>;
  checkCursorLinks(page, headers.link, sort);
  return { items: page.items, nextCursor: page.nextCursor, prevCursor: page.prevCursor };
}

/**
 * Walks a collection forward in cursor mode like a client: follows `nextCursor` (checking
 * the `Link` header agrees) until it is `null`. `between` runs after each page.
 */
export async function walkCursorPages(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  between: () => Promise<void> | void = () => {},
  sort?: string,
): Promise<WalkedPage[]> {
  const pages: WalkedPage[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 10_000; n++) {
    const page = await fetchCursorPage(paginator, fetch, limit, cursor, sort);
    if (n === 0 && page.prevCursor !== null) throw new Error('prevCursor on the first page');
    pages.push(page);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
    await between();
  }
  throw new Error('walk did not end');
}

/** {@link walkCursorPages}, flattened to the rows seen. */
export async function walkCursor(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  between: () => Promise<void> | void = () => {},
): Promise<Item[]> {
  return (await walkCursorPages(paginator, fetch, limit, between)).flatMap((p) => p.items);
}

/**
 * Walks back from `from` following `prevCursor` until it is `null`; resolves the pages
 * visited, nearest first (`from` itself not included). `between` runs after each page.
 */
export async function walkBack(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  from: WalkedPage,
  between: () => Promise<void> | void = () => {},
  sort?: string,
): Promise<WalkedPage[]> {
  const pages: WalkedPage[] = [];
  let cursor = from.prevCursor;
  for (let n = 0; n < 10_000; n++) {
    if (cursor === null) return pages;
    await between();
    const page = await fetchCursorPage(paginator, fetch, limit, cursor, sort);
    pages.push(page);
    cursor = page.prevCursor;
  }
  throw new Error('walk did not end');
}

/** Follows `cursor` once: the page it leads to. */
export function followCursor(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  cursor: string,
): Promise<WalkedPage> {
  return fetchCursorPage(paginator, fetch, limit, cursor);
}

/** Walks in offset mode following the `Link` header; `total` is the row count when given. */
export async function walkOffset(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<{ rows: Item[]; total?: number }>,
  limit: number,
): Promise<Item[]> {
  const seen: Item[] = [];
  let url = new URL(URL_BASE);
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('offset', '0');
  for (let pages = 0; pages < 10_000; pages++) {
    const plan = await paginator.plan(url.searchParams, { filters: { tenant: 1 } });
    const { rows, total } = await fetch(plan);
    const { body, headers } = await paginator.page(plan, rows, total === undefined ? { url } : { url, total });
    seen.push(...(body as OffsetPage<Item>).items);
    const links = parseLinks(headers.link);
    const offset = Number(url.searchParams.get('offset'));
    if ((links.prev === undefined) !== (offset === 0) || (links.first === undefined) !== (offset === 0)) throw new Error(`bad prev/first: ${headers.link}`);
    if (links.prev !== undefined && links.prev.searchParams.get('offset') !== String(Math.max(0, offset - limit))) throw new Error(`bad prev: ${headers.link}`);
    if (links.first !== undefined && links.first.searchParams.get('offset') !== '0') throw new Error(`bad first: ${headers.link}`);
    if (links.next === undefined) return seen;
    url = links.next;
  }
  throw new Error('walk did not end');
}

/** What the SQL walks need from a client: node-postgres `Client`/`Pool` and PGlite both fit. */
export interface SqlClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Table of the SQL walks. `label` uses the "C" collation: byte order = JS order for ASCII. */
export const ITEMS_DDL = `
  SET TIME ZONE 'UTC';
  CREATE TABLE items (
    id bigint PRIMARY KEY,
    tenant int NOT NULL,
    created_at timestamptz NOT NULL,
    grp int NOT NULL,
    score numeric,
    label text COLLATE "C",
    flag boolean NOT NULL
  );`;

export async function insertItems(db: SqlClient, items: readonly Item[], tenant = 1): Promise<void> {
  if (items.length === 0) return;
  const params: unknown[] = [];
  const tuples = items.map((it) => {
    params.push(it.id, tenant, it.createdAt, it.grp, it.score, it.label, it.flag);
    const n = params.length;
    return `($${n - 6}::bigint, $${n - 5}::int, $${n - 4}::timestamptz, $${n - 3}::int, $${n - 2}::numeric, $${n - 1}::text, $${n}::boolean)`;
  });
  await db.query(`INSERT INTO items (id, tenant, created_at, grp, score, label, flag) VALUES ${tuples.join(', ')}`, params);
}

export async function resetItems(db: SqlClient, items: readonly Item[]): Promise<void> {
  await db.query('TRUNCATE items');
  await insertItems(db, items);
  // Rows of another tenant sit between and around tenant 1's rows: they must never show up.
  await insertItems(
    db,
    TIMESTAMPS.map((t, i) => ({ id: String(ID_BASE + 5000n + BigInt(i)), createdAt: t.text, grp: i % 3, score: null, label: 'a', flag: true })),
    2,
  );
}

/** Page query built by a keyset-where builder (injected, so fixtures stay source-agnostic). */
export function selectItems(where: { where: string; orderBy: string; limit: number; offset: number }): string {
  return `SELECT t.id::text AS id, t.created_at::text AS "createdAt", t.grp, t.score::text AS score, t.label, t.flag
            FROM items t
           WHERE t.tenant = $1 AND ${where.where}
           ORDER BY ${where.orderBy}
           LIMIT ${where.limit} OFFSET ${where.offset}`;
}

export async function countItems(db: SqlClient): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM items WHERE tenant = 1');
  return (rows[0] as { n: number }).n;
}
