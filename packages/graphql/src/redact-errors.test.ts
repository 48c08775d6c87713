/** Key text out of GraphQL errors: results, streams of them, and Apollo's formatted errors. */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { redactFormattedError } from './index.ts';
import { redactResult, redactResults } from './redact-errors.ts';

const KEY = 'acme_live_0123456789abcdefghijABCDEFGHIJKLMN1a2B';

describe('redacting key text from GraphQL errors', () => {
  it('rewrites the message, the path and the extensions of an error holding key text, and keeps what the server decides on', () => {
    const original = new Error('resolver failed');
    const error = new GraphQLError(`Cannot query field "${KEY}" on type "Query".`, { path: [KEY, 0], originalError: original, extensions: { code: 'GRAPHQL_VALIDATION_FAILED', seen: [{ value: KEY }] } });
    const { errors } = redactResult({ data: null, errors: [error] });
    const [out] = errors!;
    expect(out).toBeInstanceOf(GraphQLError);
    expect(out!.message).toBe('Cannot query field "…1a2B" on type "Query".');
    expect(out!.path).toEqual(['…1a2B', 0]);
    expect(out!.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', seen: [{ value: '…1a2B' }] });
    expect(out!.originalError).toBe(original);
    expect(JSON.stringify(out)).not.toContain(KEY.slice(-20));
  });

  it('leaves a result without key text as the same object', () => {
    const result = { data: null, errors: [new GraphQLError('Cannot query field "orders" on type "Query".')] };
    expect(redactResult(result)).toBe(result);
    const plain = { data: { a: 1 } };
    expect(redactResult(plain)).toBe(plain);
  });

  it('redacts every result of a stream as it comes', async () => {
    async function* stream() {
      yield { data: { n: 1 } };
      yield { errors: [new GraphQLError(`bad ${KEY}`)] };
    }
    const out = [];
    for await (const result of redactResults(stream())) out.push(result);
    expect(out.map((r) => r.errors?.[0]?.message ?? null)).toEqual([null, 'bad …1a2B']);
  });

  it('redactFormattedError: every string of a formatted error, the same object when it holds none', () => {
    const formatted = { message: `Variable "$first" got invalid value "${KEY}"`, locations: [{ line: 1, column: 8 }], extensions: { code: 'BAD_USER_INPUT', stacktrace: [`GraphQLError: ${KEY}`] } };
    expect(redactFormattedError(formatted)).toEqual({ message: 'Variable "$first" got invalid value "…1a2B"', locations: [{ line: 1, column: 8 }], extensions: { code: 'BAD_USER_INPUT', stacktrace: ['GraphQLError: …1a2B'] } });
    const clean = { message: 'Syntax Error: Expected Name, found "}".' };
    expect(redactFormattedError(clean)).toBe(clean);
  });
});
