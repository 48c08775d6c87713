/**
 * What `createApiKeyGuard` says about each option that is not what it needs, word for
 * word: a developer reads these at startup. Found unpinned by the mutation run over
 * `api-key-guard.ts` (docs/security.md, "Mutation testing"), where a missing check fails
 * later with a `TypeError` instead of naming the option.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_test' });
afterAll(() => keyring.close());

describe('createApiKeyGuard: options refused, named', () => {
  it('keyring: absent, or without authenticate or authorize', () => {
    const message = new ConfigError('keyring must be a Keyring (see createKeyring)');
    for (const bad of [undefined, null, {}, { authenticate: keyring.authenticate }, { authorize: keyring.authorize }]) {
      expect(() => createApiKeyGuard({ keyring: bad as never })).toThrow(message);
    }
  });

  it('limiter, refusedCredentials and concurrency of the wrong kind', () => {
    expect(() => createApiKeyGuard({ keyring, limiter: {} as never })).toThrow(new ConfigError('limiter must be a RateLimiter (see createRateLimiter)'));
    for (const refusedCredentials of [null, 'off', 5, true]) {
      expect(() => createApiKeyGuard({ keyring, refusedCredentials: refusedCredentials as never }), String(refusedCredentials)).toThrow(
        new ConfigError('refusedCredentials must be false or { limit, windowSeconds, store? }'),
      );
    }
    for (const concurrency of [null, {}, 5]) {
      expect(() => createApiKeyGuard({ keyring, concurrency: concurrency as never }), String(concurrency)).toThrow(
        new ConfigError('concurrency must be a ConcurrencyLimit (see createConcurrencyLimit)'),
      );
    }
  });

  it('an unknown option names the factory', () => {
    expect(() => createApiKeyGuard({ keyring, limit: 5 } as never)).toThrow(/^createApiKeyGuard: /);
  });

  it('accepts the documented forms', () => {
    expect(() => createApiKeyGuard({ keyring })).not.toThrow();
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: false })).not.toThrow();
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: {} })).not.toThrow();
  });
});
