/**
 * API keys for GraphQL over HTTP with graphql-yoga: keyset's guard runs on every request
 * before the server parses it, the verified key goes into the context, declared scopes are
 * checked per operation and per field before execution.
 * @module
 */
import { ConfigError, isKeysetError, toProblem, type ApiKeyGuard, type ApiKeyGuardResult, type KeysetError, type VerifiedKey } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, finishWebResponse, webGuardRequest, type KnownOptions } from '@keyset/core/adapter';
import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { graphQLErrorMembers } from './connection.ts';
import { redactResult, redactResults } from './redact-errors.ts';
import { assertFieldScopes, scopeRefusal } from './required-scopes.ts';

/** Options of {@link useApiKey}. */
export interface UseApiKeyOptions {
  /** The guard from `createApiKeyGuard()`, shared with your REST routes if you have any. */
  guard: ApiKeyGuard;
  /** Scopes every request's key must hold, else HTTP 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /**
   * Scopes per schema coordinate: `'Query.orders': ['orders:read']` for one field,
   * `'Mutation': ['orders:write']` for every field of a type (an operation type names the
   * operation). An operation that selects a field whose scopes the key lacks is not
   * executed: its response is one `insufficient_scope` error with `missing_scopes`.
   * @default {}
   */
  fieldScopes?: Readonly<Record<string, readonly string[]>>;
  /** Credits a request spends from the key's quota, an integer 0 to 1,000,000. @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events. @default 'POST /graphql' as the request names it */
  route?: string;
  /** The socket's peer (IP allowlists, refused-credential budgets), never a header. @default unknown */
  clientAddress?: (request: Request) => string | null | undefined;
}

const OPTIONS = { guard: true, scopes: true, fieldScopes: true, cost: true, route: true, clientAddress: true } as const satisfies KnownOptions<UseApiKeyOptions>;

/** What the plugin adds to the GraphQL context: the verified key. */
export interface ApiKeyContext {
  apiKey: VerifiedKey;
}

/** The graphql-yoga plugin hooks this plugin uses, typed structurally (no import of graphql-yoga). */
export interface ApiKeyYogaPlugin {
  onRequest(payload: { request: Request; endResponse(response: Response): void }): Promise<void>;
  onContextBuilding(payload: { context: { request?: Request }; extendContext(extension: ApiKeyContext): void }): void;
  onExecute(payload: { args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined; contextValue: unknown }; setResultAndStopExecution(result: ExecutionResult): void }): void;
  onResultProcess(payload: { result: YogaResult; setResult(result: YogaResult): void }): void;
  onResponse(payload: { request: Request; response: Response; setResponse(response: Response): void }): void;
}

/** What graphql-yoga hands its result processing: one result, a batch, or a stream of them. */
type YogaResult = ExecutionResult | ExecutionResult[] | AsyncIterable<ExecutionResult>;

/**
 * A graphql-yoga plugin that admits a GraphQL request only with a valid API key: missing,
 * unknown, revoked or expired keys, rate limits and quotas are refused before the request
 * is parsed, with the HTTP status and headers keyset's REST adapters send (401 with
 * `WWW-Authenticate`, 429 with `Retry-After` and `RateLimit`, …) and a GraphQL body whose
 * one error has keyset's problem code in `extensions.code`. Admitted responses carry the
 * `RateLimit` headers; resolvers read the key as `context.apiKey`. No key text appears in
 * any error: key-shaped text in graphql-js's own messages (which quote the document) is
 * redacted too.
 *
 * @example
 * ```ts
 * const yoga = createYoga({ schema, plugins: [useApiKey({ guard, fieldScopes: { 'Query.orders': ['orders:read'] } })] });
 * ```
 */
export function useApiKey(options: UseApiKeyOptions): ApiKeyYogaPlugin {
  assertKnownOptions('useApiKey', options, OPTIONS);
  const { guard, scopes, fieldScopes = {}, cost, route, clientAddress } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('useApiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (clientAddress !== undefined && typeof clientAddress !== 'function') throw new ConfigError('useApiKey() clientAddress must be a function (request) => address');
  assertFieldScopes('useApiKey', fieldScopes);
  const checkOptions = apiKeyCheckOptions({ ...(scopes === undefined ? {} : { scopes }), ...(cost === undefined ? {} : { cost }), ...(route === undefined ? {} : { route }) });
  // The admission of each request in flight, from the request hook to the response hook.
  const admitted = new WeakMap<Request, ApiKeyGuardResult>();

  return {
    async onRequest({ request, endResponse }) {
      try {
        admitted.set(request, await guard.check(webGuardRequest(request, clientAddress?.(request)), checkOptions));
      } catch (error) {
        if (!isKeysetError(error)) throw error;
        endResponse(refusal(error, request));
      }
    },
    onContextBuilding({ context, extendContext }) {
      const result = context.request === undefined ? undefined : admitted.get(context.request);
      if (result !== undefined) extendContext({ apiKey: result.key });
    },
    onExecute({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as { request?: Request } | null)?.request;
      const result = request === undefined ? undefined : admitted.get(request);
      if (result === undefined) {
        // A context built without a request this plugin admitted (an in-process execute): no key, no execution.
        setResultAndStopExecution({ errors: [new GraphQLError('An API key is required.', { extensions: { code: 'missing_api_key' } })] });
        return;
      }
      const refused = scopeRefusal(result.key, args.schema, args.document, args.operationName, fieldScopes);
      if (refused !== undefined) setResultAndStopExecution({ errors: [refused] });
    },
    // graphql-js quotes the document in its errors: key text a client put there is redacted
    // before it is sent (and before a log of the response can hold it).
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(redactResult));
      else if (Symbol.asyncIterator in result) setResult(redactResults(result));
      else setResult(redactResult(result));
    },
    onResponse({ request, response, setResponse }) {
      const result = admitted.get(request);
      if (result === undefined) return;
      admitted.delete(request);
      setResponse(finishWebResponse(request.method, response, result));
    },
  };
}

/** keyset's refusal as a GraphQL over HTTP response: the problem's status and headers, a GraphQL body. */
function refusal(error: KeysetError, request: Request): Response {
  const { status, headers } = toProblem(error);
  const accept = request.headers.get('accept') ?? '';
  const contentType = accept.includes('application/graphql-response+json') ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8';
  return new Response(JSON.stringify({ errors: [graphQLErrorMembers(error)] }), { status, headers: { ...headers, 'content-type': contentType } });
}
