/**
 * During an outage a store failure is logged once per interval with a
 * count, never once per request with a stack trace. The keyring (key store) and the
 * limiter's quota step (quota store) each keep that state on their own instance.
 */
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { generateKey } from '../keys/key-format.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const PREFIX = 'acme_test';

interface Line {
  level: 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger() {
  const lines: Line[] = [];
  return {
    lines,
    warn: (fields: Record<string, unknown>, message: string) => void lines.push({ level: 'warn', fields, message }),
    error: (fields: Record<string, unknown>, message: string) => void lines.push({ level: 'error', fields, message }),
  };
}

const withStack = (line: Line): boolean => Object.values(line.fields).some((v) => v instanceof Error);

describe('key store outage: one log line per interval', () => {
  it('2,000 refused lookups in 9 s write one line with the error; the next interval one line with the count; recovery one line', async () => {
    const memory = createMemoryKeyStore();
    let down = true;
    const store: KeyStore = { ...memory, findByDigest: (digest) => (down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:5432'), { code: 'ECONNREFUSED' })) : memory.findByDigest(digest)) };
    let now = Date.UTC(2025, 0, 1);
    const logger = recordingLogger();
    const keyring = createKeyring({ store, prefix: PREFIX, clock: () => now, logger, lastUsed: false, cache: false });
    const storeLines = () => logger.lines.filter((l) => l.message.startsWith('key store'));

    for (let i = 0; i < 2_000; i++) {
      now += 4.5;
      const error = await keyring.verify(generateKey(PREFIX)).catch((e: unknown) => e);
      expect(isKeysetError(error) && error.code).toBe('unavailable');
    }
    expect(storeLines()).toHaveLength(1);
    expect(storeLines()[0]).toMatchObject({ level: 'error', message: 'key store unavailable', fields: { operation: 'findByDigest' } });

    now += 1_500;
    await keyring.verify(generateKey(PREFIX)).catch(() => undefined);
    expect(storeLines()).toHaveLength(2);
    expect(storeLines()[1]!.fields).toMatchObject({ operation: 'findByDigest', failures: 2_000, totalFailures: 2_001 });
    expect(withStack(storeLines()[1]!)).toBe(false);

    down = false;
    await keyring.verify(generateKey(PREFIX)).catch(() => undefined); // unknown key: the store answered
    expect(storeLines()).toHaveLength(3);
    expect(storeLines()[2]).toMatchObject({ message: 'key store answers again', fields: { failures: 0, totalFailures: 2_001 } });
    // Two keyrings count apart: the state is on the instance.
    const other = recordingLogger();
    down = true;
    const second = createKeyring({ store, prefix: PREFIX, clock: () => now, logger: other, lastUsed: false, cache: false });
    await second.verify(generateKey(PREFIX)).catch(() => undefined);
    expect(other.lines.filter((l) => l.message === 'key store unavailable')).toHaveLength(1);
  });
});

describe('quota store outage: one log line per interval', () => {
  it('1,000 spends against a failing quota store write one line, then one per interval, then one on recovery', async () => {
    let now = Date.UTC(2025, 0, 1);
    let down = true;
    const logger = recordingLogger();
    const limiter = createRateLimiter({
      defaultPolicy: { limit: 1_000_000, windowSeconds: 1 },
      clock: () => now,
      logger,
      quotaStore: { spend: () => (down ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve({ allowed: true, remaining: 9 })) },
    });
    const quota = { remaining: 10, refill: null, setAt: new Date(now) };
    for (let i = 0; i < 1_000; i++) {
      now += 5;
      const error = await limiter.check('key_1', undefined, { quota }).catch((e: unknown) => e);
      expect(isKeysetError(error) && error.code).toBe('unavailable');
    }
    const quotaLines = () => logger.lines.filter((l) => l.message.startsWith('quota store'));
    expect(quotaLines()).toHaveLength(1);
    now += 6_000;
    await limiter.check('key_1', undefined, { quota }).catch(() => undefined);
    expect(quotaLines()).toHaveLength(2);
    expect(quotaLines()[1]!.fields).toMatchObject({ failures: 1_000, mode: 'closed' });
    expect(withStack(quotaLines()[1]!)).toBe(false);
    down = false;
    await limiter.check('key_1', undefined, { quota });
    expect(quotaLines().map((l) => l.message)).toEqual(['quota store failed', 'quota store failed (repeated)', 'quota store answers again']);
  });
});
