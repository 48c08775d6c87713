/**
 * Input check every quota store runs before touching state, so a programming mistake is
 * a `ConfigError` and never a corrupted count.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { MAX_QUOTA_COST, MAX_QUOTA_CREDITS } from './quota-period.ts';
import type { QuotaSpend } from './types.ts';

const isInt = (v: unknown, min: number, max: number): boolean => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

/**
 * Throws `ConfigError` unless `request` is a well-formed `QuotaSpend`.
 *
 * @example
 * ```ts
 * checkQuotaSpend({ key: 'key_1', generation: 0, initial: 10, period: 0, refillAmount: null, cost: 1 });
 * ```
 */
export function checkQuotaSpend(request: QuotaSpend): void {
  const { key, generation, initial, period, refillAmount, cost } = request ?? ({} as QuotaSpend);
  if (typeof key !== 'string' || key.length === 0) throw new ConfigError('A quota key must be a non-empty string');
  if (!isInt(generation, 0, Number.MAX_SAFE_INTEGER)) throw new ConfigError(`quota generation must be a non-negative integer, got ${String(generation)}`);
  if (!isInt(initial, 0, MAX_QUOTA_CREDITS)) throw new ConfigError(`quota initial credits must be an integer from 0 to ${MAX_QUOTA_CREDITS}, got ${String(initial)}`);
  if (!isInt(period, 0, Number.MAX_SAFE_INTEGER)) throw new ConfigError(`quota period must be a non-negative integer, got ${String(period)}`);
  if (refillAmount !== null && !isInt(refillAmount, 1, MAX_QUOTA_CREDITS)) {
    throw new ConfigError(`quota refill amount must be null or an integer from 1 to ${MAX_QUOTA_CREDITS}, got ${String(refillAmount)}`);
  }
  if (!isInt(cost, 0, MAX_QUOTA_COST)) throw new ConfigError(`cost must be an integer from 0 to ${MAX_QUOTA_COST}, got ${String(cost)}`);
  const { partition } = request;
  if (partition !== undefined && (typeof partition !== 'string' || partition.length === 0)) throw new ConfigError('A quota partition must be a non-empty string when given');
}

/**
 * Throws `ConfigError` unless `requests` is a non-empty list of well-formed spends with
 * distinct keys (what `QuotaStore.spendAll` takes).
 *
 * @example
 * ```ts
 * checkQuotaSpends([keySpend, ownerSpend]);
 * ```
 */
export function checkQuotaSpends(requests: readonly QuotaSpend[]): void {
  if (!Array.isArray(requests) || requests.length === 0) throw new ConfigError('spendAll needs a non-empty list of quota spends');
  const keys = new Set<string>();
  for (const request of requests) {
    checkQuotaSpend(request);
    if (keys.has(request.key)) throw new ConfigError('spendAll needs distinct quota keys');
    keys.add(request.key);
  }
}
