/**
 * @keyset/graphql: Relay Cursor Connections on keyset's signed, filter-bound cursors,
 * exactly as the specification's pagination algorithm states them, and API keys for
 * GraphQL over HTTP (a graphql-yoga plugin; a context function and a plugin for Apollo Server).
 * @module
 */
export { connection, connectionTypeDefs, graphQLErrorMembers, planConnection, toGraphQLError } from './connection.ts';
export type { Connection, ConnectionArgs, ConnectionOptions, Edge, PageInfo } from './connection.ts';
export { useApiKey } from './yoga.ts';
export type { ApiKeyContext, ApiKeyYogaPlugin, UseApiKeyOptions } from './yoga.ts';
export { apolloApiKeyContext, apolloFieldScopes } from './apollo.ts';
export { redactFormattedError } from './redact-errors.ts';
export type { ApolloApiKeyOptions, ApolloFieldScopesOptions, ApolloFieldScopesPlugin, ApolloNodeContextArgs } from './apollo.ts';
export type { FieldScopes } from './required-scopes.ts';
