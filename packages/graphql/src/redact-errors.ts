/**
 * Key text out of GraphQL errors. keyset's own errors never hold any, but graphql-js
 * quotes the document in its messages (`Cannot query field "acme_live_…" on type
 * "Query"`, `Variable "$first" got invalid value "acme_live_…"`), so a key pasted into a
 * query, a variable or an alias came back in the response and in every log of it.
 * @module
 */
import { containsKeyShapedText, redactText } from '@keyset/core';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';

/** `value` with every string in it (plain objects and arrays, however deep) redacted; anything else as it is. */
function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, redactDeep(member)]));
  }
  return value;
}

/** Whether an error, as it would be sent, holds key-shaped text. */
function holdsKeyText(error: GraphQLError | GraphQLFormattedError): boolean {
  return containsKeyShapedText(JSON.stringify(error));
}

/**
 * A `GraphQLError` as it is when it holds no key text, else a copy with its message, path
 * and extensions redacted (the same locations and original error, so a server's status
 * and masking decisions stay as they were).
 */
function redactError(error: GraphQLError): GraphQLError {
  if (!holdsKeyText(error)) return error;
  return new GraphQLError(redactText(error.message), {
    ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
    ...(error.source === undefined ? {} : { source: error.source }),
    ...(error.positions === undefined ? {} : { positions: error.positions }),
    ...(error.path === undefined ? {} : { path: error.path.map((segment) => (typeof segment === 'string' ? redactText(segment) : segment)) }),
    ...(error.originalError == null ? {} : { originalError: error.originalError }),
    extensions: redactDeep(error.extensions) as GraphQLError['extensions'],
  });
}

/** An execution result with its errors redacted; the same object when none holds key text. */
export function redactResult<Result extends ExecutionResult>(result: Result): Result {
  const errors = result.errors;
  if (errors === undefined || !errors.some((e) => holdsKeyText(e))) return result;
  return { ...result, errors: errors.map((e) => (e instanceof GraphQLError ? redactError(e) : (redactDeep(e) as GraphQLError))) };
}

/** Every result of a stream (`@defer`, `@stream`, subscriptions) redacted as it comes. */
export async function* redactResults<Result extends ExecutionResult>(results: AsyncIterable<Result>): AsyncIterable<Result> {
  for await (const result of results) yield redactResult(result);
}

/**
 * An error as a server sends it (`{ message, locations, path, extensions }`) with key text
 * redacted from every string in it: Apollo Server's `formatError` option, or the last step
 * of yours. The `useApiKey()` plugin does this itself on graphql-yoga.
 *
 * @example
 * ```ts
 * const server = new ApolloServer<ApiKeyContext>({ typeDefs, resolvers, formatError: redactFormattedError });
 * ```
 */
export function redactFormattedError(formattedError: GraphQLFormattedError): GraphQLFormattedError {
  if (!holdsKeyText(formattedError)) return formattedError;
  return redactDeep(formattedError) as GraphQLFormattedError;
}
