import { describe, expect, it } from 'vitest';
import { createFailureLog } from './failure-log.ts';

function recorder() {
  let now = 1_700_000_000_000;
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const log = createFailureLog({ write: (fields, message) => lines.push({ fields, message }), clock: () => now, intervalMs: 10_000 });
  return { log, lines, advance: (ms: number) => (now += ms) };
}

class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

describe('createFailureLog', () => {
  it('writes the first failure of a kind with its error, then one line per interval with the count since', () => {
    const { log, lines, advance } = recorder();
    const error = new ConnectionError('connect ECONNREFUSED 10.0.0.9:6379', 'ECONNREFUSED');
    log.failed('quota spend', error, 'quota store failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields.err).toBe(error);
    for (let i = 0; i < 3_000; i++) {
      advance(3); // 9 s in all: inside the interval
      log.failed('quota spend', new ConnectionError(`connect ECONNREFUSED 10.0.0.${i % 200}:6379`, 'ECONNREFUSED'), 'quota store failed');
    }
    expect(lines).toHaveLength(1);
    advance(1_000);
    log.failed('quota spend', error, 'quota store failed');
    expect(lines).toHaveLength(2);
    expect(lines[1]!.message).toBe('quota store failed (repeated)');
    expect(lines[1]!.fields).toMatchObject({ operation: 'quota spend', failures: 3_001, totalFailures: 3_002 });
    // A summary line carries the error as text, no Error object (no stack trace).
    expect(Object.values(lines[1]!.fields).some((v) => v instanceof Error)).toBe(false);
    expect(lines[1]!.fields.error).toBe('ConnectionError: connect ECONNREFUSED 10.0.0.9:6379');
  });

  it('tells kinds apart by operation, error name and code, not by message', () => {
    const { log, lines } = recorder();
    log.failed('findByDigest', new ConnectionError('a', 'ECONNREFUSED'), 'key store unavailable');
    log.failed('findByDigest', new ConnectionError('b', 'ECONNREFUSED'), 'key store unavailable');
    log.failed('findByDigest', new ConnectionError('c', 'ETIMEDOUT'), 'key store unavailable');
    log.failed('revoke', new ConnectionError('d', 'ECONNREFUSED'), 'key store unavailable');
    log.failed('findByDigest', new TypeError('e'), 'key store unavailable');
    expect(lines.map((l) => (l.fields.err as Error).message)).toEqual(['a', 'c', 'd', 'e']);
  });

  it('writes what was counted when the operation answers again, and starts afresh', () => {
    const { log, lines, advance } = recorder();
    log.recovered('quota spend', 'answers again'); // nothing failing: no line
    expect(lines).toHaveLength(0);
    for (let i = 0; i < 5; i++) log.failed('quota spend', new Error('down'), 'quota store failed');
    expect(log.failing).toBe(true);
    advance(2_500);
    log.recovered('quota spend', 'quota store answers again');
    expect(lines[1]).toEqual({
      fields: { operation: 'quota spend', error: 'Error: down', failures: 4, totalFailures: 5, downMs: 2_500 },
      message: 'quota store answers again',
    });
    expect(log.failing).toBe(false);
    log.failed('quota spend', new Error('down'), 'quota store failed');
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fields.err).toBeInstanceOf(Error);
  });

  it('remembers a bounded number of kinds and never throws for a throwing logger', () => {
    const throwing = createFailureLog({ write: () => { throw new Error('sink closed'); }, clock: () => 0 });
    expect(() => throwing.failed('x', new Error('down'), 'failed')).not.toThrow();
    const { log, lines } = recorder();
    for (let i = 0; i < 1_000; i++) {
      const error = Object.assign(new Error('down'), { code: `E${i}` });
      log.failed('op', error, 'failed');
      log.failed('op', error, 'failed');
    }
    // Each kind: its first line, and the count of the one not yet written when it is dropped.
    expect(lines.length).toBe(1_000 + (1_000 - 64));
  });
});
