/**
 * Log capture: drive every path that can see a key (issue, verify, rotate, revoke, each
 * failure, store outages, key in query, flush failures) with a capturing logger and
 * `console.*` spied, then check that no 5-character window of any key's secret part
 * appears in anything captured, thrown, serialised or inspected. Keys come from a seeded
 * generator so the check is deterministic (a random 5-gram could otherwise match text by
 * chance once in a few dozen runs).
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { toProblem } from '../errors.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { createApiKeyGuard } from '../auth/api-key-guard.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { redactUrl } from '../auth/query-credentials.ts';

const PREFIX = 'acme_live';

/** xorshift32: deterministic "random" bytes for this test only. */
function seededCrypto(seed: number) {
  let x = seed;
  return {
    ...defaultCrypto,
    randomBytes(n: number): Uint8Array {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        out[i] = x & 0xff;
      }
      return out;
    },
  };
}

const captured: string[] = [];
const capture = (...values: unknown[]): void => {
  for (const v of values) {
    captured.push(typeof v === 'string' ? v : inspect(v, { depth: 10, showHidden: true }));
    try {
      captured.push(JSON.stringify(v) ?? '');
    } catch {
      /* circular: inspect above covers it */
    }
  }
};

beforeEach(() => {
  captured.length = 0;
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => capture(`console.${method}`, ...args));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Windows that include at least one character after the public `prefix_`. */
function secretWindows(key: string, size = 5): string[] {
  const out: string[] = [];
  for (let i = Math.max(0, PREFIX.length + 1 - (size - 1)); i + size <= key.length; i++) out.push(key.slice(i, i + size));
  return out;
}

describe('no key text reaches logs, errors or serialised objects', () => {
  it('holds across issue, verify, rotate, revoke and every failure path', async () => {
    const logger = { warn: capture, error: capture, info: capture, debug: capture };
    const memory = createMemoryKeyStore();
    let down = false;
    const store = Object.fromEntries(
      Object.entries(memory).map(([name, fn]) => [
        name,
        async (...args: unknown[]) => {
          if (down) throw new Error(`store down during ${name}(${args.length} args)`);
          return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
        },
      ]),
    ) as unknown as KeyStore;
    let now = Date.UTC(2025, 0, 1);
    const keyring = createKeyring({ store, prefix: PREFIX, crypto: seededCrypto(0x9e3779b9), clock: () => now, logger, lastUsed: { intervalMs: 60_000 } });
    const admin = createKeyAdmin(keyring);
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1, windowSeconds: 60 }, clock: () => now, logger: { warn: capture } });
    const guard = createApiKeyGuard({ keyring, limiter });
    const keys: string[] = [];
    const thrown: unknown[] = [];
    const attempt = async (fn: () => Promise<unknown>): Promise<void> => {
      try {
        capture(await fn());
      } catch (error) {
        thrown.push(error);
      }
    };

    const a = await admin.issue({ name: 'a', scopes: ['orders:read'] });
    const b = await admin.issue({ name: 'b', scopes: [], expiresAt: new Date(now + 1000) });
    keys.push(a.key, b.key);
    capture(a.record, b.record, a.record.secrets);
    captured.push(inspect(a), inspect(b)); // an IssuedKey printed by mistake shows …last4
    await attempt(() => keyring.verify(a.key));
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key}`, url: '/' }, { scopes: ['keys:admin'] })); // 403 (counted: the one request)
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key}`, url: '/api/orders' }, { scopes: ['orders:read'] })); // 429
    await attempt(() => guard.check({ authorization: `Bearer ${a.key}`, url: '/' }));
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key}x`, url: '/' })); // malformed
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key.slice(0, 20)}Z${a.key.slice(21)}`, url: '/' })); // checksum
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key}`, url: `/api/orders?api_key=${a.key}` }));
    await attempt(() => guard.check({ authorization: `ApiKey ${a.key}`, url: `/api/orders?q=${a.key}` }));
    captured.push(redactUrl(`/api/orders?api_key=${a.key}&x=${b.key}`));
    now += 1000;
    await attempt(() => keyring.verify(b.key)); // expired
    const rotated = await admin.rotate(a.record.id, { overlapSeconds: 0 });
    keys.push(rotated.key);
    capture(rotated.record);
    captured.push(inspect(rotated));
    await attempt(() => keyring.verify(a.key)); // expired by rotation
    await attempt(() => keyring.verify(rotated.key));
    const stranger = await createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, crypto: seededCrypto(7), lastUsed: false })).issue({ name: 's', scopes: [] });
    keys.push(stranger.key);
    await attempt(() => keyring.verify(stranger.key)); // unknown
    down = true;
    await attempt(() => keyring.verify(`${stranger.key.slice(0, -6)}${'0'.repeat(6)}`));
    const c = await createKeyAdmin(createKeyring({ store: memory, prefix: PREFIX, crypto: seededCrypto(99), lastUsed: false })).issue({ name: 'c', scopes: [] });
    keys.push(c.key);
    await attempt(() => keyring.verify(c.key)); // 503, store error as cause
    await attempt(() => keyring.close()); // flush fails: logged, then close rejects
    down = false;
    await attempt(() => admin.revoke(rotated.record.id));
    await attempt(() => keyring.verify(rotated.key)); // revoked
    await attempt(() => admin.get(a.record.id));
    await attempt(() => admin.list({ mode: 'offset', limit: 10 }));

    for (const error of thrown) {
      const e = error as Error & { detail?: string };
      captured.push(e.message, e.detail ?? '', String(e.cause ?? ''), inspect(e, { depth: 10, showHidden: true }), JSON.stringify(e), JSON.stringify(toProblem(e)));
    }
    const codes = thrown.map((e) => (e as { code?: string }).code);
    expect(codes).toEqual(expect.arrayContaining(['rate_limited', 'insufficient_scope', 'unsupported_auth_scheme', 'invalid_api_key', 'api_key_in_query', 'unavailable']));
    expect(captured.join('\n')).toContain('api key rejected'); // the logger did receive the failures

    const text = captured.join('\n');
    for (const key of keys) {
      for (const window of secretWindows(key)) {
        if (text.includes(window)) throw new Error(`captured text contains ${JSON.stringify(window)}, part of a key`);
      }
    }
    // The check itself can fail: a key printed raw would be caught.
    expect(secretWindows(a.key).some((w) => `${text}\n${a.key}`.includes(w))).toBe(true);
  });
});
