/**
 * The core's walk properties (`dialect-walks.test-support.ts`) through `keysetPage` and
 * `countRows`: one `WalkSource` per Kysely instance. Test fixture only: not exported,
 * not built.
 * @module
 */
import { keysetWhere, type PagePlan, type SortSpec, type SqlDialect } from '@keyset/core';
import type { PGlite } from '@electric-sql/pglite';
import { PostgresDialect, sql, type Kysely, type PostgresPool } from 'kysely';
import { timestampText, type WalkSource } from '../../core/src/pagination/dialect-walks.test-support.ts';
import type { ItemFilter, OffsetPageSource } from '../../core/src/pagination/offset-pages.test-support.ts';
import type { Item } from '../../core/src/pagination/walk.test-support.ts';
import { countRows } from './count-rows.ts';
import { keysetPage } from './keyset-page.ts';

/** The walk table as the three drivers type it. */
export interface WalkDB {
  items: {
    id: string | bigint;
    tenant: number;
    created_at: string;
    grp: number | bigint;
    score: string | number | null;
    label: string | null;
    flag: boolean | number | bigint;
  };
}

/** `items` in SQLite: ISO text timestamps (fixed width: text order = time order), REAL scores. */
export const SQLITE_ITEMS_DDL = `CREATE TABLE items (
  id INTEGER PRIMARY KEY, tenant INTEGER NOT NULL, created_at TEXT NOT NULL, grp INTEGER NOT NULL,
  score REAL, label TEXT, flag INTEGER NOT NULL)`;

/** A row as the walks compare it: `id` and `score` as text, `flag` a boolean. */
function toItem(r: { id: string | bigint; createdAt: string; grp: number | bigint; score: string | number | null; label: string | null; flag: boolean | number | bigint }): Item {
  return {
    id: String(r.id),
    createdAt: r.createdAt,
    grp: Number(r.grp),
    score: r.score === null ? null : String(r.score),
    label: r.label,
    flag: Boolean(Number(r.flag)),
  };
}

function itemsTable(db: Kysely<WalkDB>, dialect: SqlDialect) {
  // Exact ids past 2^53: MySQL would compare a string with BIGINT as a double.
  const id = (value: string) => (dialect === 'sqlite' ? BigInt(value) : dialect === 'mysql' ? sql<string>`CAST(${value} AS SIGNED)` : value);
  const createdAt = (text: string): string => (dialect === 'postgres' ? text : timestampText(text, dialect === 'mysql' ? 'mysql' : 'iso'));
  const filtered = (filter: ItemFilter) => {
    const q = db.selectFrom('items as t').select(['t.id', 't.created_at as createdAt', 't.grp', 't.score', 't.label', 't.flag']).where('t.tenant', '=', filter.tenant);
    return filter.grp === null ? q : q.where('t.grp', '=', filter.grp);
  };
  return {
    id,
    filtered,
    async clear() {
      await db.deleteFrom('items').execute();
    },
    async insert(items: readonly Item[], tenant: number) {
      await db
        .insertInto('items')
        .values(
          items.map((it) => ({
            id: id(it.id),
            tenant,
            created_at: createdAt(it.createdAt),
            grp: it.grp,
            score: it.score,
            label: it.label,
            flag: dialect === 'sqlite' ? Number(it.flag) : it.flag,
          })),
        )
        .execute();
    },
  };
}

export function kyselySource(db: Kysely<WalkDB>, dialect: SqlDialect): WalkSource {
  const table = itemsTable(db, dialect);
  const tenant1 = { tenant: 1, grp: null };
  return {
    clear: table.clear,
    insert: table.insert,
    async remove(value) {
      await db.deleteFrom('items').where('id', '=', table.id(value)).execute();
    },
    async fetch(plan: PagePlan, sort: SortSpec) {
      return (await keysetPage(table.filtered(tenant1), plan, sort, dialect).execute()).map(toItem);
    },
    count: () => countRows(db, table.filtered(tenant1)),
  };
}

/**
 * The walk with the driver at its defaults (no type parser, no `dateStrings`, no safe
 * integers): the rows go to the paginator as the driver makes them (timestamps as `Date`s,
 * BIGINT and REAL as JS numbers), and keysetPage's own exact sort values make the cursors.
 * Only what the walk's checks read is fixed up, in place (the rows keep what keysetPage
 * attached): `id` from exact text selected beside it, `flag` as a boolean.
 */
export function kyselyDefaultsSource(db: Kysely<WalkDB>, dialect: SqlDialect): WalkSource {
  const table = itemsTable(db, dialect);
  const tenant1 = { tenant: 1, grp: null };
  const idText = sql<string>`CAST(t.id AS ${sql.raw(dialect === 'mysql' ? 'CHAR' : 'TEXT')})`.as('idText');
  return {
    clear: table.clear,
    insert: table.insert,
    async remove(value) {
      await db.deleteFrom('items').where('id', '=', table.id(value)).execute();
    },
    async fetch(plan: PagePlan, sort: SortSpec) {
      const rows = await keysetPage(table.filtered(tenant1).select(idText), plan, sort, dialect).execute();
      return rows.map((row) => {
        const r = row as unknown as Record<string, unknown>;
        r.id = r.idText;
        delete r.idText;
        r.flag = Boolean(Number(r.flag));
        return r as unknown as Item;
      });
    },
    count: () => countRows(db, table.filtered(tenant1)),
  };
}

/** Offset pages through `keysetPage` (the deferred join) beside the plain `ORDER BY … LIMIT … OFFSET` query. */
export function kyselyOffsetSource(db: Kysely<WalkDB>, dialect: SqlDialect): OffsetPageSource {
  const table = itemsTable(db, dialect);
  return {
    clear: table.clear,
    insert: table.insert,
    async page(plan, sort, filter) {
      return (await keysetPage(table.filtered(filter), plan, sort, dialect).execute()).map(toItem);
    },
    async plain(plan, sort, filter) {
      const k = keysetWhere(plan, sort, dialect);
      return (await table.filtered(filter).orderBy(sql.raw(k.orderBy)).limit(k.limit).offset(k.offset).execute()).map(toItem);
    },
  };
}

/**
 * Kysely's PostgreSQL dialect over one PGlite instance. kysely-pglite 0.6 does not load
 * with Kysely 0.29 (it imports `Migrator` from the root entry, which 0.29 moved), and
 * the pool interface Kysely asks for is this small.
 */
export function pgliteDialect(client: PGlite): PostgresDialect {
  const connection = {
    async query(text: string, params: readonly unknown[]) {
      const r = await client.query<Record<string, unknown>>(text, [...params]);
      return { command: 'SELECT' as const, rowCount: r.affectedRows ?? r.rows.length, rows: r.rows };
    },
    release() {},
  };
  return new PostgresDialect({ pool: { connect: async () => connection, end: async () => {} } as unknown as PostgresPool });
}
