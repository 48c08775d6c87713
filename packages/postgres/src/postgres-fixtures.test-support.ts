/**
 * What the PostgreSQL store's suites share: the database a backend's test file hands them,
 * fresh table prefixes, a client that counts round trips, and the check that a driver
 * failure is a 503 naming no key.
 * @module
 */
import { inspect } from 'node:util';
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { expect } from 'vitest';
import type { MultiStatementQueryable, Queryable } from './queryable.ts';

/** A database to test against; `schema` is this test file's own. */
export interface PostgresBackend {
  client: MultiStatementQueryable;
  schema: string;
}

/** Wraps a real client and counts the statements sent through it (round trips). */
export function countingClient(client: Queryable): { client: Queryable; count: () => number } {
  let count = 0;
  return {
    client: {
      query(text: string, params?: unknown[]) {
        count += 1;
        return params === undefined ? client.query(text) : client.query(text, params);
      },
    },
    count: () => count,
  };
}

/** A prefix no other test uses (48 random bits, no counter shared between files), so every test gets empty tables. */
export function freshPrefix(): string {
  return `t${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}_`;
}

/** Asserts a KeysetError('unavailable') that mentions none of `secrets`, even deep in its cause. */
export function expectUnavailable(error: unknown, secrets: readonly string[]): KeysetError {
  expect(isKeysetError(error)).toBe(true);
  const problem = toProblem(error);
  expect(problem.status).toBe(503);
  expect(problem.body.code).toBe('unavailable');
  const everything = `${String(error)} ${inspect(error, { depth: 10, showHidden: true })} ${JSON.stringify(problem)}`;
  for (const secret of secrets) expect(everything).not.toContain(secret);
  expect((error as KeysetError).cause).toBeInstanceOf(Error);
  return error as KeysetError;
}
