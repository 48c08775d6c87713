/**
 * @keyset/graphql: Relay Cursor Connections on keyset's signed, filter-bound cursors,
 * exactly as the specification's pagination algorithm states them.
 * @module
 */
export { connection, connectionTypeDefs, planConnection, toGraphQLError } from './connection.ts';
export type { Connection, ConnectionArgs, ConnectionOptions, Edge, PageInfo } from './connection.ts';
