/**
 * What a usage store checks of a batch before writing it: a store is public API, and a
 * malformed delta (a negative count, a minute that is not one) would corrupt every bucket
 * it is added to.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { UsageDelta, UsageFlushToken } from './types.ts';
import { USAGE_OUTCOMES } from './usage-range.ts';

const isCount = (n: unknown): boolean => Number.isSafeInteger(n) && (n as number) >= 0;

/** Throws `ConfigError` for a batch that is not one (it never holds key text: ids only). */
export function checkUsageDeltas(deltas: readonly UsageDelta[]): void {
  if (!Array.isArray(deltas)) throw new ConfigError('add() takes an array of usage deltas');
  for (const delta of deltas) {
    const { keyId, ownerId, minute, requests, credits } = delta ?? ({} as UsageDelta);
    if (typeof keyId !== 'string' || keyId.length === 0) throw new ConfigError('a usage delta needs a non-empty keyId');
    if (ownerId !== null && (typeof ownerId !== 'string' || ownerId.length === 0)) throw new ConfigError('a usage delta ownerId is a non-empty string or null');
    if (!isCount(minute) || minute % 60_000 !== 0) throw new ConfigError(`a usage delta minute is epoch ms at a minute's start, got ${String(minute)}`);
    if (!Array.isArray(requests) || requests.length !== USAGE_OUTCOMES.length || !requests.every(isCount)) {
      throw new ConfigError(`a usage delta has ${USAGE_OUTCOMES.length} request counts (${USAGE_OUTCOMES.join(', ')}), each a non-negative integer`);
    }
    if (!isCount(credits)) throw new ConfigError('a usage delta credits is a non-negative integer');
  }
}

/** Throws `ConfigError` for a flush token that is not one (absent is fine: a plain add). */
export function checkUsageFlushToken(token: UsageFlushToken | undefined): void {
  if (token === undefined) return;
  const { instance, sequence } = token ?? ({} as UsageFlushToken);
  if (typeof instance !== 'string' || instance.length === 0 || instance.length > 100) throw new ConfigError('a usage flush token instance is a string of 1 to 100 characters');
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw new ConfigError(`a usage flush token sequence is a positive integer, got ${String(sequence)}`);
}
