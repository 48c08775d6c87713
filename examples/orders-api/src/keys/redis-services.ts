/**
 * Redis, when `REDIS_URL` is set: the shared GCRA store (one script call per request)
 * and the revocation bus that evicts cached keys on every instance.
 * @module
 */
import type { Keyring, RateLimitStore } from '@keyset/core';
import type { Logger } from '../logger.ts';

/** What Redis provides to one process. */
export interface RedisServices {
  rateLimitStore: RateLimitStore;
  close(): Promise<void>;
}

/** Connects to Redis and wires the rate-limit store and revocation bus. */
export async function connectRedis(_deps: { url: string; keyring: Keyring; logger: Logger }): Promise<RedisServices> {
  throw new Error('REDIS_URL support is not wired yet: @keyset/redis has not landed');
}
