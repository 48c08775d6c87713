/**
 * What a keyset page costs through `@keyset/prisma` against a plain `findMany` of the same
 * rows (docs/prisma.md): 20 orders of 2,000 on PostgreSQL (adapter-pg, microsecond
 * timestamps, an index on the sort), one page in the middle of the walk:
 * - plain `findMany`: `where` on `createdAt` below a millisecond `Date`, `orderBy`, `take 21`;
 * - `findManyPage` with a cursor whose timestamp is whole milliseconds: the same `findMany`
 *   plus the read of the page's timestamps by primary key;
 * - `findManyPage` with a cursor holding microseconds: the condition widened to the
 *   millisecond (its extra rows dropped) plus the read.
 *
 * Run: npx -y pnpm@10.34.9 bench prisma-page (TEST_DATABASE_URL names the server)
 */
import { createPaginator, type PagePlan, type SortKey } from '@keyset/core';
import { findManyPage } from '@keyset/prisma';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../packages/prisma/src/testing/generated/postgres/client.ts';
import { compare, save, setting } from './support.ts';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = setting('BENCH_ROWS', 2000, 200);
const schema = `keyset_prisma_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
await admin.query(`CREATE TABLE ${schema}.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, customer text NOT NULL,
  amount_cents bigint NOT NULL, currency char(3) NOT NULL, status text NOT NULL)`);
await admin.query(`CREATE INDEX ON ${schema}.orders (created_at DESC, id DESC)`);
// Three orders per millisecond, microseconds apart.
await admin.query(
  `INSERT INTO ${schema}.orders SELECT n, timestamptz '2025-01-01 00:00:00+00' + (n / 3) * interval '1 millisecond' + (n % 3) * interval '1 microsecond', 'cust', n, 'EUR', 'paid'
   FROM generate_series(1, $1::int) AS n`,
  [ROWS],
);
await admin.query(`ANALYZE ${schema}.orders`);
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }, { schema }) });

const sort: SortKey[] = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
];
const paginator = createPaginator<Record<string, unknown>>({ endpoint: 'GET /orders', sort, cursor: { secrets: ['a-prisma-bench-secret-of-at-least-32-bytes'] } });
const middle = Math.floor(ROWS / 2);
const at = (n: number): string => new Date(Date.UTC(2025, 0, 1) + Math.floor(n / 3)).toISOString().replace(/\.(\d{3})Z$/, (_, ms: string) => `.${ms}${String(n % 3).padStart(3, '0')}Z`);
const plan = (after: readonly [string, string]): PagePlan => ({ mode: 'cursor', limit: 20, take: 21, direction: 'forward', after, sort: paginator.sort, fingerprint: '' });
const whole = plan([at(middle - (middle % 3)), String(middle - (middle % 3))]);
const micro = plan([at(middle - (middle % 3) + 1), String(middle - (middle % 3) + 1)]);
const options = { sort: paginator.sort, dialect: 'postgres' as const, timestamps: { client: prisma, table: `${schema}.orders` } };
const before = new Date(Date.UTC(2025, 0, 1) + Math.floor(middle / 3));

try {
  const rows = await compare(`one page of 20 of ${ROWS} orders, PostgreSQL`, 'plain findMany', [
    { name: 'plain findMany', fn: () => prisma.order.findMany({ where: { createdAt: { lt: before } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 21 }) },
    { name: 'findManyPage, millisecond cursor', fn: () => findManyPage(prisma.order, whole, {}, options) },
    { name: 'findManyPage, microsecond cursor', fn: () => findManyPage(prisma.order, micro, {}, options) },
  ]);
  save('prisma-page', { rows: ROWS, pageSize: 20, cases: rows });
} finally {
  await prisma.$disconnect();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}
