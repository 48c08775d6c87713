/**
 * A server that cannot reach its database or Redis says why once: the line names the URL
 * (without its password) and the socket's own error, not "Connection is closed." and not
 * the same cause twice ("connect ECONNREFUSED …: connect ECONNREFUSED …").
 */
import { createKeyring, createMemoryKeyStore } from '@keyset/core';
import { freePort as closedPort } from '@keyset/test-support';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/database.ts';
import { connectRedis } from '../src/keys/redis-services.ts';
import { createLogger } from '../src/logger.ts';

/** What the example's logger writes for a failed start (main.ts logs `{ err }`). */
function failureLine(error: unknown): { message: string; cause?: { message: string } } {
  const lines: string[] = [];
  createLogger('info', { write: (line: string) => void lines.push(line) }).fatal({ err: error }, 'orders API failed to start');
  return (JSON.parse(lines[0]!) as { err: { message: string; cause?: { message: string } } }).err;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('connection errors at start', () => {
  it('DATABASE_URL: the message names the refused connection once', async () => {
    const port = await closedPort();
    const error = await openPostgres(`postgres://postgres:hunter2@127.0.0.1:${port}/x`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const err = failureLine(error);
    expect(err.message).toBe(`cannot connect to DATABASE_URL (postgres://postgres:***@127.0.0.1:${port}/x): connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(occurrences(err.message, 'ECONNREFUSED')).toBe(1);
    expect(err.message).not.toContain('hunter2');
    expect(err.cause?.message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('REDIS_URL: the message names the socket error, once, not "Connection is closed."', async () => {
    const port = await closedPort();
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const error = await connectRedis({
      url: `redis://127.0.0.1:${port}`,
      keyring: createKeyring({ store: createMemoryKeyStore(), prefix: 'sk_test' }),
      durableQuotas: { load: async () => undefined, save: async (entries) => entries.map((entry) => entry.state) },
      logger,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const err = failureLine(error);
    expect(err.message).toBe(`cannot connect to REDIS_URL (redis://127.0.0.1:${port}): connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(occurrences(err.message, 'ECONNREFUSED')).toBe(1);
  });
});
