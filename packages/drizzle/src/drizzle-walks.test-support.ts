/**
 * The core's walk properties (`dialect-walks.test-support.ts`) through `keysetPage` and
 * `countRows`: the walk table in each drizzle core, and one `WalkSource` per database.
 * Test fixture only: not exported, not built.
 * @module
 */
import { keysetWhere, type PagePlan, type SortSpec } from '@keyset/core';
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import * as my from 'drizzle-orm/mysql-core';
import * as pg from 'drizzle-orm/pg-core';
import * as lite from 'drizzle-orm/sqlite-core';
import { timestampText, type WalkSource } from '../../core/src/pagination/dialect-walks.test-support.ts';
import type { ItemFilter, OffsetPageSource } from '../../core/src/pagination/offset-pages.test-support.ts';
import type { Item } from '../../core/src/pagination/walk.test-support.ts';
import { countRows, type CountingDatabase } from './count-rows.ts';
import { keysetPage } from './keyset-page.ts';

export const pgItems = pg.pgTable('items', {
  id: pg.bigint('id', { mode: 'bigint' }).primaryKey(),
  tenant: pg.integer('tenant').notNull(),
  createdAt: pg.timestamp('created_at', { withTimezone: true, mode: 'string', precision: 6 }).notNull(),
  grp: pg.integer('grp').notNull(),
  score: pg.numeric('score'),
  label: pg.text('label'),
  flag: pg.boolean('flag').notNull(),
});

export const mysqlItems = my.mysqlTable('items', {
  id: my.bigint('id', { mode: 'bigint' }).primaryKey(),
  tenant: my.int('tenant').notNull(),
  createdAt: my.datetime('created_at', { mode: 'string', fsp: 6 }).notNull(),
  grp: my.int('grp').notNull(),
  score: my.decimal('score', { precision: 20, scale: 2 }),
  label: my.varchar('label', { length: 10 }),
  flag: my.boolean('flag').notNull(),
});

export const sqliteItems = lite.sqliteTable('items', {
  id: lite.integer('id', { mode: 'number' }).primaryKey(),
  tenant: lite.integer('tenant').notNull(),
  createdAt: lite.text('created_at').notNull(),
  grp: lite.integer('grp').notNull(),
  score: lite.real('score'),
  label: lite.text('label'),
  flag: lite.integer('flag', { mode: 'boolean' }).notNull(),
});

/**
 * The walk table with each column in Drizzle's default mode where it has one, as a user
 * who picks no mode has it: timestamps as `Date`s, bigint ids as JS numbers (pg-core and
 * mysql-core ask for a mode: `'number'`, the one that needs no BigInt in JSON).
 */
const pgDefaultItems = pg.pgTable('items', {
  id: pg.bigint('id', { mode: 'number' }).primaryKey(),
  tenant: pg.integer('tenant').notNull(),
  createdAt: pg.timestamp('created_at', { withTimezone: true }).notNull(),
  grp: pg.integer('grp').notNull(),
  score: pg.numeric('score'),
  label: pg.text('label'),
  flag: pg.boolean('flag').notNull(),
});
const mysqlDefaultItems = my.mysqlTable('items', {
  id: my.bigint('id', { mode: 'number' }).primaryKey(),
  tenant: my.int('tenant').notNull(),
  createdAt: my.datetime('created_at', { fsp: 6 }).notNull(),
  grp: my.int('grp').notNull(),
  score: my.decimal('score', { precision: 20, scale: 2 }),
  label: my.varchar('label', { length: 10 }),
  flag: my.boolean('flag').notNull(),
});

type Dialect = 'postgres' | 'mysql' | 'sqlite';
type AnyItems = typeof pgItems | typeof mysqlItems | typeof sqliteItems;

/**
 * What the walk calls on a Drizzle database. The three cores' query builders differ in
 * type only; the calls are the same, so the fixture talks to them through this shape.
 */
interface WalkDatabase extends CountingDatabase {
  select(fields: Record<string, unknown>): { from(table: unknown): any };
  insert(table: unknown): { values(rows: unknown[]): PromiseLike<unknown> };
  delete(table: unknown): { where(condition: SQL | undefined): PromiseLike<unknown> } & PromiseLike<unknown>;
}

export function drizzleSource(database: unknown, dialect: Dialect): WalkSource {
  const db = database as WalkDatabase;
  const items: AnyItems = dialect === 'postgres' ? pgItems : dialect === 'mysql' ? mysqlItems : sqliteItems;
  const t = dialect === 'postgres' ? pg.alias(pgItems, 't') : dialect === 'mysql' ? my.alias(mysqlItems, 't') : lite.alias(sqliteItems, 't');
  // Ids past 2^53 stay exact: as text from the database, as bigint (pg, mysql) or through
  // a text → integer cast (SQLite, whose drizzle integer column is a JS number) into it.
  const id = dialect === 'sqlite' ? sql<string>`cast(${t.id} as text)` : t.id;
  const idValue = (value: string): unknown => (dialect === 'sqlite' ? sql`cast(${value} as integer)` : BigInt(value));
  const createdAt = (text: string): string => (dialect === 'postgres' ? text : timestampText(text, dialect === 'mysql' ? 'mysql' : 'iso'));
  const tenant1 = eq(t.tenant, 1);
  const count = (): Promise<number> => countRows(db, items, eq(items.tenant, 1));
  return {
    async clear() {
      await db.delete(items);
    },
    async insert(rows, tenant) {
      await db.insert(items).values(
        rows.map((it) => ({
          id: idValue(it.id),
          tenant,
          createdAt: createdAt(it.createdAt),
          grp: it.grp,
          score: dialect === 'sqlite' && it.score !== null ? Number(it.score) : it.score,
          label: it.label,
          flag: it.flag,
        })),
      );
    },
    async remove(value) {
      await db.delete(items).where(inArray(items.id as never, [idValue(value)] as never));
    },
    async fetch(plan: PagePlan, sort: SortSpec) {
      const page = keysetPage(t, plan, sort);
      const rows: Record<string, unknown>[] = await db
        .select({ id, createdAt: t.createdAt, grp: t.grp, score: t.score, label: t.label, flag: t.flag })
        .from(t)
        .where(and(tenant1, page.where))
        .orderBy(...page.orderBy)
        .limit(page.limit)
        .offset(page.offset);
      return rows.map((r): Item => ({ ...(r as unknown as Item), id: String(r.id), score: r.score === null ? null : String(r.score), flag: Boolean(r.flag) }));
    },
    count,
  };
}

/**
 * The walk with the driver at its defaults and the columns in Drizzle's default modes
 * (`pgDefaultItems`, `mysqlDefaultItems`; sqlite-core's integer is a JS number): the
 * rows go to the paginator as Drizzle makes them, with `...page.select` spread into the
 * selection, and the cursors come from it. Only what the walk's checks read is fixed up,
 * in place: `id` from exact text selected beside it, `flag` as a boolean. Rows are
 * written through `drizzleSource`'s exact columns.
 */
export function drizzleDefaultsSource(database: unknown, dialect: Dialect): WalkSource {
  const db = database as WalkDatabase;
  const exact = drizzleSource(database, dialect);
  const t = dialect === 'postgres' ? pg.alias(pgDefaultItems, 't') : dialect === 'mysql' ? my.alias(mysqlDefaultItems, 't') : lite.alias(sqliteItems, 't');
  const idText = sql<string>`cast(${t.id} as ${sql.raw(dialect === 'mysql' ? 'char' : 'text')})`;
  return {
    ...exact,
    async fetch(plan: PagePlan, sort: SortSpec) {
      const page = keysetPage(t, plan, sort);
      const rows: Record<string, unknown>[] = await db
        .select({ ...page.select, id: t.id, idText, createdAt: t.createdAt, grp: t.grp, score: t.score, label: t.label, flag: t.flag })
        .from(t)
        .where(and(eq(t.tenant, 1), page.where))
        .orderBy(...page.orderBy)
        .limit(page.limit)
        .offset(page.offset);
      return rows.map((r) => {
        r.id = r.idText;
        delete r.idText;
        r.flag = Boolean(r.flag);
        return r as unknown as Item;
      });
    },
  };
}

/**
 * Offset pages through `keysetPage` with `{ db, where }` (the deferred join) beside the
 * plain query: the same filters, ORDER BY, LIMIT take and OFFSET.
 */
export function drizzleOffsetSource(database: unknown, dialect: Dialect): OffsetPageSource {
  const db = database as WalkDatabase;
  const walk = drizzleSource(database, dialect);
  const t = dialect === 'postgres' ? pg.alias(pgItems, 't') : dialect === 'mysql' ? my.alias(mysqlItems, 't') : lite.alias(sqliteItems, 't');
  const id = dialect === 'sqlite' ? sql<string>`cast(${t.id} as text)` : t.id;
  const filters = (filter: ItemFilter): SQL | undefined => and(eq(t.tenant, filter.tenant), filter.grp === null ? undefined : eq(t.grp, filter.grp));
  const select = () => db.select({ id, createdAt: t.createdAt, grp: t.grp, score: t.score, label: t.label, flag: t.flag }).from(t);
  const toItems = (rows: Record<string, unknown>[]): Item[] =>
    rows.map((r): Item => ({ ...(r as unknown as Item), id: String(r.id), score: r.score === null ? null : String(r.score), flag: Boolean(r.flag) }));
  return {
    clear: walk.clear,
    insert: walk.insert,
    async page(plan, sort, filter) {
      const page = keysetPage(t, plan, sort, { db, where: filters(filter) });
      return toItems(await select().where(page.where).orderBy(...page.orderBy).limit(page.limit).offset(page.offset));
    },
    async plain(plan, sort, filter) {
      const k = keysetWhere(plan, sort, dialect);
      const orderBy = k.orderBy.split(', ').map((item) => sql.raw(item));
      return toItems(await select().where(filters(filter)).orderBy(...orderBy).limit(k.limit).offset(k.offset));
    },
  };
}
