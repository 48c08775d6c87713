/**
 * docs/prisma.md's recipe (the example's `GET /api/orders` through Prisma), run as written
 * against the example's own schema and seed: for every page of several walks (each sort
 * the route offers, filters, both directions, offset mode) it returns the rows and total
 * the example's SQL handler returns for the same plan.
 */
import { createPaginator, type CountedTotal, type PagePlan } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import { PrismaPg } from '@prisma/adapter-pg';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_LIMITS } from '../../../examples/orders-api/src/app/create-app.ts';
import { orderFilters } from '../../../examples/orders-api/src/app/order-filters.ts';
import { createOrderHandlers, ORDER_SORT, ORDER_SORTABLE, type Order } from '../../../examples/orders-api/src/app/orders.ts';
import { migrateOrders, seedOrders } from '../../../examples/orders-api/src/db/orders-schema.ts';
import { PrismaClient } from './testing/generated/postgres/client.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const url = await postgresUrl();
const schema = uniqueSchema('keyset_prisma_recipe');
const runDir = join(root, '.docs-run', `prisma-recipe-${process.pid}`);
let pool: pg.Pool;
let prisma: PrismaClient;
type List = (plan: PagePlan) => Promise<{ rows: Order[]; total?: CountedTotal }>;
let recipe: List;

/** The ```ts block after `<!-- recipe: orders-route -->` in docs/prisma.md. */
function recipeBlock(): string {
  const doc = readFileSync(join(root, 'docs', 'prisma.md'), 'utf8');
  const at = doc.indexOf('<!-- recipe: orders-route -->');
  const start = doc.indexOf('```ts\n', at);
  if (at < 0 || start < 0) throw new Error('docs/prisma.md has no orders-route recipe');
  return doc.slice(start + 6, doc.indexOf('\n```', start));
}

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  await migrateOrders(pool);
  await seedOrders(pool, 400);
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2, options: `-c search_path=${schema}` }, { schema }) });
  // The block as written, with `prisma` (a declaration in the docs) bound to this client.
  mkdirSync(runDir, { recursive: true });
  const file = join(runDir, 'recipe.ts');
  writeFileSync(file, `const prisma = (globalThis as { keysetRecipePrisma?: unknown }).keysetRecipePrisma as never;\n${recipeBlock()}\n`);
  (globalThis as { keysetRecipePrisma?: unknown }).keysetRecipePrisma = prisma;
  ({ listOrders: recipe } = (await import(file)) as { listOrders: List });
}, 120_000);

afterAll(async () => {
  rmSync(runDir, { recursive: true, force: true });
  if (url === undefined) return;
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
  await prisma.$disconnect();
});

describe.skipIf(url === undefined)('docs/prisma.md: the orders route through Prisma', () => {
  it('returns the example handler\'s rows and total for every page, forward and back, in every sort and filter', async () => {
    const sql = createOrderHandlers({ db: pool }).list;
    const orders = createPaginator<Order>({
      endpoint: 'GET /api/orders',
      sort: ORDER_SORT,
      sortable: ORDER_SORTABLE,
      filters: orderFilters,
      total: 'exact',
      limits: PAGE_LIMITS,
      cursor: { secrets: ['a-prisma-recipe-test-secret-of-at-least-32-bytes'] },
    });
    let pages = 0;
    const compare = async (query: URLSearchParams): Promise<{ nextCursor: string | null; prevCursor: string | null }> => {
      const plan = await orders.plan(query);
      const expected = await sql(plan);
      expect(await recipe(plan), query.toString()).toEqual(expected);
      pages++;
      const { body } = await orders.page(plan, expected.rows, { url: `https://api.test/api/orders?${query}` });
      return 'nextCursor' in body ? body : { nextCursor: null, prevCursor: null };
    };
    for (const start of ['limit=37', 'limit=50&sort=amountCents', 'limit=9&status=paid&status=refunded&sort=-amountCents', 'limit=3&customer=cust_0007', 'limit=25&sort=id']) {
      let next: string | null = (await compare(new URLSearchParams(start))).nextCursor;
      let last: string | null = null;
      while (next !== null) {
        const q: URLSearchParams = new URLSearchParams(start);
        q.set('cursor', next);
        const body = await compare(q);
        last = body.prevCursor;
        next = body.nextCursor;
      }
      while (last !== null) {
        const q: URLSearchParams = new URLSearchParams(start);
        q.set('cursor', last);
        last = (await compare(q)).prevCursor;
      }
    }
    for (const offset of ['0', '7', '390', '400']) await compare(new URLSearchParams({ offset, limit: '11', sort: '-createdAt' }));
    expect(pages).toBeGreaterThan(60);
  }, 180_000);
});
