/**
 * What a page of a keyset connection costs against the plain resolver teams write today
 * (docs/graphql.md): one `orders(first: 20, after: $cursor)` page in the middle of a walk,
 * newest first, through graphql-js's `execute` with the same schema and document, as
 * - plain resolver: the cursor is base64 JSON of the last row's sort values (unsigned, not
 *   bound to the field or its filters, anyone can edit it), `hasNextPage` from one extra
 *   row, each edge's cursor encoded the same way;
 * - keyset connection: `planConnection` (verify and decode the signed cursor) and
 *   `connection` (a signed cursor on every edge, pageInfo as the specification states).
 * Twice: over rows already in memory (the work of the cursors and the connection alone),
 * and over PostgreSQL (10,000 orders, an index on the sort, the same SQL row comparison for
 * both), where a page's query is in the price.
 *
 * Run: npx -y pnpm@10.34.9 bench graphql-page (TEST_DATABASE_URL names the server)
 */
import { createPaginator, keysetWhere, type SortKey } from '@keyset/core';
import { connection, connectionTypeDefs, planConnection, type ConnectionArgs } from '@keyset/graphql';
import { buildSchema, execute, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import pg from 'pg';
import { compare, save, setting } from './support.ts';

interface Order {
  id: string;
  createdAt: string;
  status: string;
  amountCents: number;
}

const ROWS = setting('BENCH_ROWS', 10_000, 300);
const PAGE = 20;
const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const sort = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
] as const satisfies readonly SortKey[];
const orders = createPaginator<Order>({ endpoint: 'Query.orders', sort, limits: { default: PAGE, max: 100 }, cursor: { secrets: ['a-graphql-bench-secret-of-at-least-32-bytes'] } });

const typeDefs = `type Order { id: String! createdAt: String! status: String! amountCents: Int! }
  ${connectionTypeDefs('Order')}
  type Query { orders(first: Int, after: String, last: Int, before: String): OrderConnection! }`;
const schema: GraphQLSchema = buildSchema(typeDefs);
const document: DocumentNode = parse('query ($after: String) { orders(first: 20, after: $after) { edges { cursor node { id createdAt status amountCents } } pageInfo { hasNextPage endCursor } } }');

// Three orders per millisecond, microseconds apart; ids past 2^53.
const at = (n: number): string => new Date(Date.UTC(2025, 0, 1) + Math.floor(n / 3)).toISOString().replace(/\.(\d{3})Z$/, (_, ms: string) => `.${ms}${String(n % 3).padStart(3, '0')}Z`);
const order = (n: number): Order => ({ id: String(2n ** 53n + BigInt(n)), createdAt: at(n), status: 'paid', amountCents: 100 + (n % 977) });
const middle = Math.floor(ROWS / 2);

/** The plain resolver's cursor: the sort values as base64 JSON. */
const plainCursor = (row: Order): string => Buffer.from(JSON.stringify([row.createdAt, row.id])).toString('base64url');
const plainPosition = (cursor: string): [string, string] => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
function plainConnection(rows: Order[], first: number) {
  const page = rows.slice(0, first);
  const edges = page.map((node) => ({ node, cursor: plainCursor(node) }));
  return { edges, pageInfo: { hasNextPage: rows.length > first, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** One page through `execute`, as a server runs it, failing loudly on any error. */
async function run(rootValue: unknown, after: string): Promise<unknown> {
  const result = await execute({ schema, document, rootValue, variableValues: { after } });
  if (result.errors !== undefined) throw result.errors[0];
  return result;
}

// The cursors a client holds in the middle of the walk.
const keysetAfter = (await connection(orders, await planConnection(orders, { first: 1 }), [order(middle)])).edges[0]!.cursor;
const plainAfter = plainCursor(order(middle));

// In memory: the 21 rows after the cursor, as any source would hand them over.
const fetched = Array.from({ length: PAGE + 1 }, (_, i) => order(middle - 1 - i));
const memory = await compare(`one page of ${PAGE}, rows in memory (graphql execute)`, 'plain resolver', [
  {
    name: 'plain resolver',
    fn: () =>
      run({
        orders: (args: ConnectionArgs) => {
          if (args.after) plainPosition(args.after);
          return plainConnection(fetched, args.first ?? PAGE);
        },
      }, plainAfter),
  },
  {
    name: 'keyset connection',
    fn: () =>
      run({
        orders: async (args: ConnectionArgs) => connection(orders, await planConnection(orders, args), fetched),
      }, keysetAfter),
  },
]);

const schemaName = `keyset_graphql_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
let database;
try {
  await admin.query(`CREATE SCHEMA ${schemaName}`);
  await admin.query(`CREATE TABLE ${schemaName}.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, status text NOT NULL, amount_cents int NOT NULL)`);
  await admin.query(`CREATE INDEX ON ${schemaName}.orders (created_at DESC, id DESC)`);
  await admin.query(
    `INSERT INTO ${schemaName}.orders SELECT $2::bigint + n, timestamptz '2025-01-01 00:00:00+00' + (n / 3) * interval '1 millisecond' + (n % 3) * interval '1 microsecond', 'paid', 100 + n % 977
     FROM generate_series(1, $1::int) AS n`,
    [ROWS, String(2n ** 53n)],
  );
  await admin.query(`ANALYZE ${schemaName}.orders`);
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schemaName}` });
  const columns = `id::text AS id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "createdAt", status, amount_cents AS "amountCents"`;
  try {
    database = await compare(`one page of ${PAGE} of ${ROWS} orders, PostgreSQL (graphql execute)`, 'plain resolver', [
      {
        name: 'plain resolver',
        fn: () =>
          run({
            orders: async (args: ConnectionArgs) => {
              const first = args.first ?? PAGE;
              const [createdAt, id] = plainPosition(args.after!);
              const { rows } = await pool.query<Order>(`SELECT ${columns} FROM orders WHERE (created_at, id) < ($1::timestamptz, $2::bigint) ORDER BY created_at DESC, id DESC LIMIT ${first + 1}`, [createdAt, id]);
              return plainConnection(rows, first);
            },
          }, plainAfter),
      },
      {
        name: 'keyset connection',
        fn: () =>
          run({
            orders: async (args: ConnectionArgs) => {
              const plan = await planConnection(orders, args);
              const k = keysetWhere(plan, plan.sort, 'postgres');
              const { rows } = await pool.query<Order>(`SELECT ${columns} FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit} OFFSET ${k.offset}`, k.params);
              return connection(orders, plan, rows);
            },
          }, keysetAfter),
      },
    ]);
  } finally {
    await pool.end();
  }
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schemaName} CASCADE`);
  await admin.end();
}

save('graphql-page', { rows: ROWS, pageSize: PAGE, memory, database });
