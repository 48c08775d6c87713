import { isKeysetError } from '@keyset/core';
import { describe, expect, it } from 'vitest';
import { asUnavailable, isConnectionError } from '../src/db/connection-errors.ts';

describe('database errors', () => {
  it('turns a lost or refused connection into 503 unavailable, keeping the cause', () => {
    for (const error of [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('database "x" is not currently accepting connections'), { code: '55000' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      // DATABASE_QUERY_TIMEOUT_MS: the server cancelled a slow statement, or said nothing at all.
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      new Error('Query read timeout'),
    ]) {
      expect(isConnectionError(error), error.message).toBe(true);
      const mapped = asUnavailable(error);
      expect(isKeysetError(mapped) && mapped.code).toBe('unavailable');
      expect((mapped as Error).cause).toBe(error);
    }
  });

  it('leaves SQL mistakes alone, so a bug is still a 500 in the log', () => {
    for (const error of [
      Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' }),
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
      Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }),
      new TypeError('x is not a function'),
    ]) {
      expect(isConnectionError(error), error.message).toBe(false);
      expect(asUnavailable(error)).toBe(error);
    }
  });
});
