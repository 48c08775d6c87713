/**
 * API keys for Apollo Server: a context function that runs keyset's guard on the Node
 * request (`startStandaloneServer`, `expressMiddleware`), refusing with the HTTP status and
 * headers keyset's REST adapters send, and a plugin checking scopes per field or operation
 * type before execution.
 * @module
 */
import { ConfigError, isKeysetError, toProblem, type ApiKeyGuard } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, nodeGuardRequest, releaseWhenClosed, type KnownOptions, type NodeIncomingRequest, type NodeServerResponse } from '@keyset/core/adapter';
import { GraphQLError, type DocumentNode, type GraphQLErrorOptions, type GraphQLSchema } from 'graphql';
import { graphQLErrorMembers } from './connection.ts';
import { assertFieldScopes, scopeRefusal, type FieldScopes } from './required-scopes.ts';
import type { ApiKeyContext } from './yoga.ts';

/** Options of {@link apolloApiKeyContext}. */
export interface ApolloApiKeyOptions {
  /** The guard from `createApiKeyGuard()`. */
  guard: ApiKeyGuard;
  /** Scopes every request's key must hold, else HTTP 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** Credits a request spends from the key's quota, an integer 0 to 1,000,000. @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events. */
  route?: string;
}

const OPTIONS = { guard: true, scopes: true, cost: true, route: true } as const satisfies KnownOptions<ApolloApiKeyOptions>;

/** What Apollo Server passes to a context function on Node: the request and the response. */
export interface ApolloNodeContextArgs {
  req: NodeIncomingRequest & { url?: string | undefined; socket?: { remoteAddress?: string | undefined } };
  res: NodeServerResponse & { setHeader(name: string, value: string): unknown; headersSent?: boolean };
}

/**
 * A context function for Apollo Server 5 on Node (`startStandaloneServer(server, { context })`,
 * `expressMiddleware(server, { context })`): the verified key as `context.apiKey`, the
 * `RateLimit` headers on the response, the in-flight lease released when it ends. A refusal
 * throws a `GraphQLError` whose `extensions.http` carries the problem's status and headers
 * (401 with `WWW-Authenticate`, 429 with `Retry-After` and `RateLimit`), which Apollo
 * Server sends without executing the operation; `extensions.code` is keyset's problem code.
 * Pass a function of your own to add to the context: `async (args) => ({ ...(await keys(args)), db })`.
 *
 * @example
 * ```ts
 * await startStandaloneServer(server, { context: apolloApiKeyContext({ guard }) });
 * ```
 */
export function apolloApiKeyContext(options: ApolloApiKeyOptions): (args: ApolloNodeContextArgs) => Promise<ApiKeyContext> {
  assertKnownOptions('apolloApiKeyContext', options, OPTIONS);
  const { guard, scopes, cost, route } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apolloApiKeyContext() needs `guard`: pass createApiKeyGuard({ keyring })');
  const checkOptions = apiKeyCheckOptions({ ...(scopes === undefined ? {} : { scopes }), ...(cost === undefined ? {} : { cost }), ...(route === undefined ? {} : { route }) });
  return async function apiKeyContext({ req, res }) {
    try {
      const admitted = await guard.check(nodeGuardRequest(req, req.url, req.socket?.remoteAddress), checkOptions);
      for (const [name, value] of Object.entries(admitted.headers)) res.setHeader(name, value);
      releaseWhenClosed(res, admitted.release);
      return { apiKey: admitted.key };
    } catch (error) {
      if (!isKeysetError(error)) throw error;
      const { status, headers } = toProblem(error);
      const { 'content-type': _contentType, ...kept } = headers;
      const { message, extensions } = graphQLErrorMembers(error);
      // Apollo Server reads `http.headers` as a Map (graphql-yoga's typing of `http`, merged
      // into graphql's where both are installed, says a record: hence the cast).
      const http = { status, headers: new Map(Object.entries(kept)) };
      throw new GraphQLError(message, { extensions: { ...extensions, http } as unknown as GraphQLErrorOptions['extensions'] });
    }
  };
}

/** Options of {@link apolloFieldScopes}. */
export interface ApolloFieldScopesOptions {
  /**
   * Scopes per schema coordinate, as `useApiKey()` takes them: `'Query.orders':
   * ['orders:read']` for one field, `'Mutation': ['orders:write']` for every field of a type.
   */
  fieldScopes: FieldScopes;
}

const FIELD_SCOPES_OPTIONS = { fieldScopes: true } as const satisfies KnownOptions<ApolloFieldScopesOptions>;

/** The Apollo Server plugin hooks {@link apolloFieldScopes} uses, typed structurally (no import of Apollo Server). */
export interface ApolloFieldScopesPlugin {
  requestDidStart(): Promise<{
    didResolveOperation(requestContext: { contextValue: unknown; document: DocumentNode; operationName: string | null | undefined; schema: GraphQLSchema }): Promise<void>;
  }>;
}

/**
 * An Apollo Server 5 plugin checking scopes per field or per operation type against the
 * key `apolloApiKeyContext()` put in the context, once the operation is resolved and before
 * it runs: an operation selecting a field (through fragments too) whose scopes the key
 * lacks is answered with HTTP 403 and one `insufficient_scope` error listing
 * `missing_scopes`, and no resolver runs. A context without a key (the context function not
 * wired) is refused with 401 `missing_api_key`, never served.
 *
 * @example
 * ```ts
 * const server = new ApolloServer<ApiKeyContext>({ typeDefs, resolvers, plugins: [apolloFieldScopes({ fieldScopes: { 'Query.orders': ['orders:read'] } })] });
 * ```
 */
export function apolloFieldScopes(options: ApolloFieldScopesOptions): ApolloFieldScopesPlugin {
  assertKnownOptions('apolloFieldScopes', options, FIELD_SCOPES_OPTIONS);
  const { fieldScopes } = options;
  assertFieldScopes('apolloFieldScopes', fieldScopes);
  const listener = {
    async didResolveOperation({ contextValue, document, operationName, schema }: { contextValue: unknown; document: DocumentNode; operationName: string | null | undefined; schema: GraphQLSchema }) {
      const key = (contextValue as Partial<ApiKeyContext> | null)?.apiKey;
      if (key === undefined) throw new GraphQLError('An API key is required.', { extensions: { code: 'missing_api_key', http: { status: 401 } } });
      const refused = scopeRefusal(key, schema, document, operationName, fieldScopes);
      if (refused !== undefined) throw refused;
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
