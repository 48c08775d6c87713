/**
 * The core's walk properties (`dialect-walks.test-support.ts`) through `findManyPage` and
 * `countRows`, on the Prisma Clients generated from `testing/*.prisma`. Test fixture only:
 * not exported, not built.
 * @module
 */
import type { SortSpec } from '@keyset/core';
import { timestampText, type WalkSource } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { TIMESTAMPS, type Item } from '../../core/src/pagination/walk.test-support.ts';
import { countRows } from './count-rows.ts';
import { findManyPage, type FindManyPageOptions } from './find-many-page.ts';
import type { PrismaClient as PostgresClient } from './testing/generated/postgres/client.ts';
import type { PrismaClient as SqliteClient } from './testing/generated/sqlite/client.ts';

/** `items` in SQLite as Prisma would create it (DATETIME, DECIMAL and BOOLEAN affinities). */
export const SQLITE_ITEMS_DDL = `CREATE TABLE items (
  id BIGINT NOT NULL PRIMARY KEY, tenant INTEGER NOT NULL, created_at DATETIME NOT NULL, grp INTEGER NOT NULL,
  score DECIMAL, label TEXT, flag BOOLEAN NOT NULL)`;

// Prisma's DateTime is a JS Date: PostgreSQL's out-of-range fixture instants (BC, year
// 10000, infinity) are stored clamped to 1000–9999, in the same order, microseconds kept.
// SQLite keeps milliseconds only: each fixture instant becomes its rank in milliseconds.
const RANKED = [...TIMESTAMPS].sort((a, b) => (a.micros < b.micros ? -1 : 1)).map((t) => t.text);
const stored = (text: string, dialect: 'postgres' | 'sqlite'): Date | string =>
  dialect === 'postgres' ? timestampText(text, 'iso') : new Date(Date.UTC(2024, 0, 1) + RANKED.indexOf(text));

type Client = PostgresClient | SqliteClient;

/** A row of the page as the walks compare it: `id` and `score` as text. */
function toItem(r: { id: bigint; createdAt: string; grp: number; score: unknown; label: string | null; flag: boolean }): Item {
  return { id: String(r.id), createdAt: r.createdAt, grp: r.grp, score: r.score === null ? null : String(r.score), label: r.label, flag: r.flag };
}

/**
 * One `WalkSource` per client. Timestamps reach the database as text on PostgreSQL
 * (microseconds kept: a `Date` would drop them) through a raw insert.
 */
export function prismaSource(prisma: Client, dialect: 'postgres' | 'sqlite', schema?: string): WalkSource {
  // Both generated clients have the same model; one type keeps the calls checked.
  const db = prisma as PostgresClient;
  const options = (sort: SortSpec): FindManyPageOptions<SortSpec> =>
    dialect === 'postgres' ? { sort, dialect, timestamps: { client: db, table: `${schema}.items` } } : { sort, dialect };
  const tenant1 = { tenant: 1 };
  return {
    async clear() {
      await db.item.deleteMany();
    },
    async insert(items: readonly Item[], tenant: number) {
      if (dialect === 'postgres') {
        // createMany would send each createdAt as a Date.
        for (const it of items) {
          await db.$executeRawUnsafe(
            `INSERT INTO "${schema}".items (id, tenant, created_at, grp, score, label, flag) VALUES ($1::bigint, $2, $3::timestamptz, $4, $5::numeric, $6, $7)`,
            it.id, tenant, stored(it.createdAt, dialect), it.grp, it.score, it.label, it.flag,
          );
        }
        return;
      }
      await db.item.createMany({
        data: items.map((it) => ({ id: BigInt(it.id), tenant, createdAt: stored(it.createdAt, dialect), grp: it.grp, score: it.score, label: it.label, flag: it.flag })),
      });
    },
    async remove(id) {
      await db.item.delete({ where: { id: BigInt(id) } });
    },
    async fetch(plan, sort) {
      return (await findManyPage(db.item, plan, { where: tenant1 }, options(sort))).map((r) => toItem(r as never));
    },
    count: () => countRows(db.item, tenant1),
  };
}
