import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { exactSortColumns, keysetWhere } from './keyset-where.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { CursorDirection, CursorPosition, PagePlan, SortKey, SortSpec } from './types.ts';

const cursorPlan = (after: CursorPosition | null, limit: number, sort: SortSpec, direction: CursorDirection = 'forward'): PagePlan => ({
  mode: 'cursor',
  limit,
  take: limit + 1,
  direction,
  after,
  sort,
  fingerprint: 'fp',
});
const newest = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
]);
const mixed = defineSortSpec([
  { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', column: 'o.id', dir: 'asc', type: 'bigint', unique: true },
]);
const T = '2024-05-01 10:00:00.123456+00';

describe('keysetWhere', () => {
  it('first page: TRUE / 1=1, ORDER BY, LIMIT take', () => {
    expect(keysetWhere(cursorPlan(null, 20, newest), newest, 'postgres')).toEqual({
      where: 'TRUE',
      orderBy: '"created_at" DESC, "id" DESC',
      limit: 21,
      offset: 0,
      params: [],
    });
    expect(keysetWhere(cursorPlan(null, 20, newest), newest, 'sqlite').where).toBe('1=1');
  });

  it('offset mode: no predicate, the offset', () => {
    const plan: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 40, sort: newest, fingerprint: 'fp' };
    expect(keysetWhere(plan, newest, 'postgres')).toMatchObject({ where: 'TRUE', limit: 11, offset: 40, params: [] });
  });

  it('one direction: a row-value comparison with typed parameters', () => {
    expect(keysetWhere(cursorPlan([T, '9007199254740993'], 20, newest), newest, 'postgres')).toMatchObject({
      where: '("created_at", "id") < ($1::timestamptz, $2::bigint)',
      params: [T, '9007199254740993'],
    });
    expect(keysetWhere(cursorPlan([T, '7'], 20, newest), newest, 'postgres', { paramOffset: 2 }).where).toBe(
      '("created_at", "id") < ($3::timestamptz, $4::bigint)',
    );
    expect(keysetWhere(cursorPlan([T, '7'], 20, newest), newest, 'sqlite')).toMatchObject({ where: '("created_at", "id") < (?, ?)', params: [T, '7'] });
  });

  it('mixed directions: leading range bound AND the OR-expansion, parameters reused in PostgreSQL', () => {
    expect(keysetWhere(cursorPlan([T, '7'], 20, mixed), mixed, 'postgres')).toMatchObject({
      where: '("o"."created_at" <= $1::timestamptz AND ("o"."created_at" < $1::timestamptz OR ("o"."created_at" = $1::timestamptz AND "o"."id" > $2::bigint)))',
      orderBy: '"o"."created_at" DESC, "o"."id" ASC',
      params: [T, '7'],
    });
  });

  it('SQLite gets one positional parameter per mention, in text order', () => {
    const { where, params } = keysetWhere(cursorPlan([T, '7'], 20, mixed), mixed, 'sqlite');
    expect(where).toBe('("o"."created_at" <= ? AND ("o"."created_at" < ? OR ("o"."created_at" = ? AND "o"."id" > ?)))');
    expect(params).toEqual([T, T, T, '7']);
  });

  it('casts decimal to numeric and leaves other types to the column', () => {
    const spec = defineSortSpec([
      { key: 'amount', dir: 'asc', type: 'decimal' },
      { key: 'name', dir: 'asc', type: 'string' },
      { key: 'n', dir: 'asc', type: 'int', unique: true },
    ]);
    expect(keysetWhere(cursorPlan(['1.50', 'x', 3], 20, spec), spec, 'postgres').where).toBe('("amount", "name", "n") > ($1::numeric, $2, $3)');
  });

  describe('nullable keys', () => {
    const spec = (nulls: 'first' | 'last', dir: 'asc' | 'desc' = 'asc') =>
      defineSortSpec([
        { key: 'score', dir, type: 'int', nullable: { nulls } },
        { key: 'id', dir: 'asc', type: 'int', unique: true },
      ]);

    it('ORDER BY states the null placement', () => {
      expect(keysetWhere(cursorPlan(null, 20, spec('last', 'desc')), spec('last', 'desc'), 'postgres').orderBy).toBe('"score" DESC NULLS LAST, "id" ASC');
      expect(keysetWhere(cursorPlan(null, 20, spec('first')), spec('first'), 'sqlite').orderBy).toBe('"score" ASC NULLS FIRST, "id" ASC');
    });

    it('non-null cursor value, nulls last: nulls are still ahead', () => {
      expect(keysetWhere(cursorPlan([5, 9], 20, spec('last')), spec('last'), 'postgres').where).toBe(
        '(("score" >= $1 OR "score" IS NULL) AND (("score" > $1 OR "score" IS NULL) OR ("score" = $1 AND "id" > $2)))',
      );
    });

    it('non-null cursor value, nulls first: nulls are behind', () => {
      expect(keysetWhere(cursorPlan([5, 9], 20, spec('first')), spec('first'), 'postgres').where).toBe('("score" >= $1 AND ("score" > $1 OR ("score" = $1 AND "id" > $2)))');
    });

    it('null cursor value, nulls first: every non-null is ahead', () => {
      const { where, params } = keysetWhere(cursorPlan([null, 9], 20, spec('first')), spec('first'), 'postgres');
      expect(where).toBe('("score" IS NOT NULL OR ("score" IS NULL AND "id" > $1))');
      expect(params).toEqual([9]);
    });

    it('null cursor value, nulls last: only the remaining nulls are ahead', () => {
      expect(keysetWhere(cursorPlan([null, 9], 20, spec('last')), spec('last'), 'sqlite')).toMatchObject({
        where: '("score" IS NULL AND "id" > ?)',
        params: [9],
      });
    });
  });

  it('a single unique key is a plain comparison', () => {
    const spec = defineSortSpec([{ key: 'id', dir: 'desc', type: 'bigint', unique: true }]);
    expect(keysetWhere(cursorPlan(['5'], 20, spec), spec, 'postgres')).toMatchObject({ where: '"id" < $1::bigint', params: ['5'] });
  });

  it('binds booleans as 1/0 for SQLite (drivers such as better-sqlite3 refuse JS booleans; SQLite stores them as integers)', () => {
    const spec = defineSortSpec([
      { key: 'flag', dir: 'desc', type: 'boolean' },
      { key: 'id', dir: 'asc', type: 'int', unique: true },
    ]);
    expect(keysetWhere(cursorPlan([true, 3], 20, spec), spec, 'sqlite').params).toEqual([1, 1, 1, 3]);
    expect(keysetWhere(cursorPlan([false, 3], 20, spec), spec, 'sqlite').params).toEqual([0, 0, 0, 3]);
    expect(keysetWhere(cursorPlan([true, 3], 20, spec), spec, 'postgres').params).toEqual([true, 3]);
  });

  it('refuses a hand-built plan whose values do not fit the spec, as documented', () => {
    expect(() => keysetWhere(cursorPlan(['2024-05-01', '7'], 20, newest), newest, 'postgres')).toThrow(TypeError);
    expect(() => keysetWhere(cursorPlan([T, 7.5 as unknown as string], 20, newest), newest, 'postgres')).toThrow(TypeError);
  });

  it('validates an unvalidated spec and the plan', () => {
    const bad: SortKey[] = [{ key: 'id', dir: 'asc', type: 'int' }];
    expect(() => keysetWhere(cursorPlan(null, 20, bad), bad, 'postgres')).toThrow(ConfigError);
    expect(() => keysetWhere(cursorPlan(['1'], 20, newest), newest, 'postgres')).toThrow(TypeError);
    expect(() => keysetWhere(cursorPlan(null, 20, newest), newest, 'oracle' as 'sqlite')).toThrow(TypeError);
  });
});

describe("keysetWhere(…, 'mysql')", () => {
  it('quotes with backticks; first page is TRUE', () => {
    expect(keysetWhere(cursorPlan(null, 20, mixed), mixed, 'mysql')).toEqual({
      where: 'TRUE',
      orderBy: '`o`.`created_at` DESC, `o`.`id` ASC',
      limit: 21,
      offset: 0,
      params: [],
    });
  });

  it('one direction still takes the OR-expansion with the leading bound (MySQL ranges need it), values cast exactly', () => {
    const { where, params } = keysetWhere(cursorPlan([T, '9007199254740993'], 20, newest), newest, 'mysql');
    expect(where).toBe(
      '(`created_at` <= CAST(? AS DATETIME(6)) AND (`created_at` < CAST(? AS DATETIME(6)) OR (`created_at` = CAST(? AS DATETIME(6)) AND `id` < CAST(? AS DECIMAL(65,0)))))',
    );
    // The timestamp as a zone-less UTC DATETIME(6) literal; the bigint as exact text.
    expect(params).toEqual(['2024-05-01 10:00:00.123456', '2024-05-01 10:00:00.123456', '2024-05-01 10:00:00.123456', '9007199254740993']);
  });

  it('writes any accepted timestamp form as UTC DATETIME(6), refuses what DATETIME cannot hold', () => {
    const one = (t: string): unknown => keysetWhere(cursorPlan([t, '1'], 20, newest), newest, 'mysql').params[0];
    expect(one('2024-05-01T12:30:00.5+02:30')).toBe('2024-05-01 10:00:00.500000');
    expect(one('2024-05-01 10:00:00')).toBe('2024-05-01 10:00:00.000000');
    expect(one('1000-01-01T00:00:00Z')).toBe('1000-01-01 00:00:00.000000');
    expect(one('9999-12-31 23:59:59.999999+00')).toBe('9999-12-31 23:59:59.999999');
    expect(() => one('infinity')).toThrow(TypeError);
    expect(() => one('0999-12-31 23:59:59Z')).toThrow(/DATETIME range/);
    expect(() => one('10000-01-01 00:00:00+00')).toThrow(/DATETIME range/);
  });

  it('emulates NULLS FIRST/LAST only where MySQL\'s own NULL order (lowest) disagrees', () => {
    const spec = (dir: 'asc' | 'desc', nulls: 'first' | 'last') =>
      defineSortSpec([
        { key: 'score', dir, type: 'decimal', nullable: { nulls } },
        { key: 'id', dir: 'asc', type: 'int', unique: true },
      ]);
    const order = (dir: 'asc' | 'desc', nulls: 'first' | 'last'): string => keysetWhere(cursorPlan(null, 20, spec(dir, nulls)), spec(dir, nulls), 'mysql').orderBy;
    expect(order('asc', 'first')).toBe('`score` ASC, `id` ASC');
    expect(order('desc', 'last')).toBe('`score` DESC, `id` ASC');
    expect(order('asc', 'last')).toBe('`score` IS NULL ASC, `score` ASC, `id` ASC');
    expect(order('desc', 'first')).toBe('`score` IS NULL DESC, `score` DESC, `id` ASC');
    expect(keysetWhere(cursorPlan(['1.5', 3], 20, spec('asc', 'last')), spec('asc', 'last'), 'mysql')).toMatchObject({
      where:
        '((`score` >= CAST(? AS DECIMAL(65,30)) OR `score` IS NULL) AND ((`score` > CAST(? AS DECIMAL(65,30)) OR `score` IS NULL) OR (`score` = CAST(? AS DECIMAL(65,30)) AND `id` > ?)))',
      params: ['1.5', '1.5', '1.5', 3],
    });
    expect(keysetWhere(cursorPlan([null, 3], 20, spec('desc', 'first')), spec('desc', 'first'), 'mysql')).toMatchObject({
      where: '(`score` IS NOT NULL OR (`score` IS NULL AND `id` > ?))',
      params: [3],
    });
  });

  it('a single key is a plain comparison; booleans bind as JS booleans (mysql2 sends them as 1/0)', () => {
    const spec = defineSortSpec([{ key: 'id', dir: 'desc', type: 'bigint', unique: true }]);
    expect(keysetWhere(cursorPlan(['42'], 20, spec), spec, 'mysql')).toMatchObject({ where: '`id` < CAST(? AS DECIMAL(65,0))', params: ['42'] });
  });
});

describe('exactSortColumns', () => {
  const spec = defineSortSpec([
    { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' },
    { key: 'label', dir: 'asc', type: 'string' },
    { key: 'amount', dir: 'asc', type: 'decimal' },
    { key: 'id', column: 'o.id', dir: 'desc', type: 'bigint', unique: true },
  ]);

  it('reads timestamps, bigints and decimals as the database writes them, under keyset_sort_<index>', () => {
    expect(exactSortColumns(spec, 'postgres')).toEqual([
      { key: 'createdAt', alias: 'keyset_sort_0', sql: 'CAST("o"."created_at" AS text)' },
      { key: 'amount', alias: 'keyset_sort_2', sql: 'CAST("amount" AS text)' },
      { key: 'id', alias: 'keyset_sort_3', sql: 'CAST("o"."id" AS text)' },
    ]);
    expect(exactSortColumns(spec, 'mysql').map((c) => c.sql)).toEqual(['CAST(`o`.`created_at` AS CHAR)', 'CAST(`amount` AS CHAR)', 'CAST(`o`.`id` AS CHAR)']);
    // SQLite timestamps are text already; a REAL stays the double it is (its text keeps 15 digits).
    expect(exactSortColumns(spec, 'sqlite')).toEqual([
      { key: 'amount', alias: 'keyset_sort_2', sql: `CASE typeof("amount") WHEN 'real' THEN "amount" ELSE CAST("amount" AS TEXT) END` },
      { key: 'id', alias: 'keyset_sort_3', sql: 'CAST("o"."id" AS TEXT)' },
    ]);
  });
});
