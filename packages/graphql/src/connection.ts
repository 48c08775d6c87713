/**
 * Relay Cursor Connections over a keyset paginator: connection arguments to a plan, fetched
 * rows to `{ edges, pageInfo, totalCount }`, keyset's problems to GraphQL errors.
 * @module
 */
import { isKeysetError, toProblem, type Paginator, type PlanOptions, type SliceArgs, type SlicePlan } from '@keyset/core';
import { GraphQLError } from 'graphql';

/** The arguments of a connection field: `first`/`after` forward, `last`/`before` backward. */
export type ConnectionArgs = SliceArgs;

/** One edge: the row and the cursor of its position, usable as `after` and as `before`. */
export interface Edge<Row> {
  node: Row;
  cursor: string;
}

/** `PageInfo` as the Relay specification defines it; the cursors are `null` on an empty connection. */
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/**
 * A connection object for a GraphQL resolver to return. `totalCount`, when the field has
 * one, is a function: GraphQL's default resolver calls it only when a query selects it,
 * so the count runs only then.
 */
export interface Connection<Row> {
  edges: Edge<Row>[];
  pageInfo: PageInfo;
  totalCount?: () => Promise<number>;
}

/** Options of {@link connection}. */
export interface ConnectionOptions {
  /** Counts every row matching the field's filters; called only when `totalCount` is selected. */
  totalCount?: () => number | Promise<number>;
}

/**
 * The GraphQL error for a failure: a keyset problem (`KeysetError`) becomes a
 * `GraphQLError` with `extensions.code` set to its code (`invalid_cursor`,
 * `invalid_limit`, `limit_too_large`, …) and the problem's own members; anything else is
 * returned as it is, for the server's own masking of unexpected errors.
 */
export function toGraphQLError(error: unknown): unknown {
  if (!isKeysetError(error)) return error;
  const { message, extensions } = graphQLErrorMembers(error);
  return new GraphQLError(message, { extensions });
}

/**
 * A keyset problem's members as a GraphQL error carries them: `message` is the problem's
 * `detail` and `extensions` its `code` and extension members, both redacted as `toProblem`
 * redacts a problem (no key text reaches a client).
 */
export function graphQLErrorMembers(error: Parameters<typeof toProblem>[0]): { message: string; extensions: Record<string, unknown> } {
  const { type: _type, title: _title, status: _status, detail, instance: _instance, ...extensions } = toProblem(error).body;
  return { message: detail, extensions };
}

/**
 * Plans a connection page from the field's arguments (see `Paginator.planSlice`): fetch
 * it with any cursor-plan source (`keysetPage` of `@keyset/kysely`, `keysetWhere`,
 * `paginateArray`) and pass the rows to {@link connection}. Bad arguments throw a
 * `GraphQLError` with keyset's problem code in `extensions.code`.
 *
 * @example
 * ```ts
 * const plan = await planConnection(orders, args, { filters: { status: args.status } });
 * const rows = await keysetPage(db.selectFrom('orders').selectAll(), plan, plan.sort, 'sqlite').execute();
 * return connection(orders, plan, rows);
 * ```
 */
export async function planConnection<Row>(paginator: Paginator<Row>, args: ConnectionArgs, options?: PlanOptions): Promise<SlicePlan> {
  try {
    return await paginator.planSlice(args, options);
  } catch (error) {
    throw toGraphQLError(error);
  }
}

/**
 * The connection for `rows` fetched for `plan` (up to `plan.take` rows, in fetch order, as
 * the source returned them): edges in the sort order for `first` and `last` alike, a
 * cursor on every edge, `pageInfo` as the specification's algorithm computes it, and
 * `totalCount` when `options.totalCount` is given.
 */
export async function connection<Row>(paginator: Paginator<Row>, plan: SlicePlan, rows: readonly Row[], options: ConnectionOptions = {}): Promise<Connection<Row>> {
  let sliced;
  try {
    sliced = await paginator.slice(plan, rows);
  } catch (error) {
    throw toGraphQLError(error);
  }
  const { items, cursors, hasNext, hasPrevious } = sliced;
  const edges = items.map((node, i) => ({ node, cursor: cursors[i] as string }));
  const pageInfo: PageInfo = {
    hasNextPage: hasNext,
    hasPreviousPage: hasPrevious,
    startCursor: cursors[0] ?? null,
    endCursor: cursors[cursors.length - 1] ?? null,
  };
  const count = options.totalCount;
  if (count === undefined) return { edges, pageInfo };
  return { edges, pageInfo, totalCount: async () => count() };
}

/**
 * SDL for a connection of `node` (a type name): `<node>Connection` and `<node>Edge`, plus
 * `PageInfo` when `pageInfo` is true (once per schema). `totalCount: Int!` is on the
 * connection; resolve it with `connection(…, { totalCount })`.
 *
 * @example
 * ```ts
 * const typeDefs = `type Order { id: ID! } ${connectionTypeDefs('Order')}`;
 * ```
 */
export function connectionTypeDefs(node: string, options: { pageInfo?: boolean } = {}): string {
  if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(node)) throw new TypeError(`connectionTypeDefs: ${JSON.stringify(node)} is not a GraphQL type name`);
  const pageInfo = options.pageInfo ?? true;
  return [
    `type ${node}Connection { edges: [${node}Edge!]! pageInfo: PageInfo! totalCount: Int! }`,
    `type ${node}Edge { node: ${node}! cursor: String! }`,
    ...(pageInfo ? ['type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }'] : []),
  ].join('\n');
}
