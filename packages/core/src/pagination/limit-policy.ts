/**
 * Page-size policy: every list endpoint has a default and a hard maximum, so no client
 * can ask for an unpaginated collection.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { LimitPolicy } from './types.ts';

/** A validated {@link LimitPolicy} that resolves a request's page size. */
export interface LimitResolver extends LimitPolicy {
  /** Page size for a syntactically valid `limit` (or none). Throws `limit_too_large` under `reject`. */
  resolve(requested: number | undefined): number;
}

/** Every name a limit policy knows (the paginator's `limits` too). Internal. */
export const LIMIT_OPTIONS: KnownOptions<LimitPolicy> = { default: true, max: true, overMax: true };

/**
 * Validates a limit policy (integers, `1 ≤ default ≤ max`, `overMax` known) and fills in
 * `{ default: 20, max: 100, overMax: 'reject' }` (the default page size is `min(20, max)`
 * when only `max` is given). Throws `ConfigError` when bad.
 *
 * @example
 * ```ts
 * const limits = createLimitPolicy({ max: 50, overMax: 'clamp' });
 * limits.resolve(500); // → 50
 * ```
 */
export function createLimitPolicy(options: Partial<LimitPolicy> = {}): LimitResolver {
  assertKnownOptions('createLimitPolicy', options, LIMIT_OPTIONS);
  const { max = 100, overMax = 'reject' } = options;
  // `{ max: 10 }` alone means "at most 10", not a config error about the implicit 20.
  const byDefault = options.default ?? Math.min(20, max);
  if (!Number.isSafeInteger(max) || max < 1) throw new ConfigError(`limits.max must be a positive integer, got ${String(max)}`);
  if (!Number.isSafeInteger(byDefault) || byDefault < 1 || byDefault > max) {
    throw new ConfigError(`limits.default must be an integer between 1 and limits.max (${max}), got ${String(byDefault)}`);
  }
  if (overMax !== 'reject' && overMax !== 'clamp') throw new ConfigError(`limits.overMax must be 'reject' or 'clamp', got ${String(overMax)}`);
  return Object.freeze({
    default: byDefault,
    max,
    overMax,
    resolve(requested: number | undefined): number {
      if (requested === undefined) return byDefault;
      if (requested <= max) return requested;
      if (overMax === 'clamp') return max;
      throw new KeysetError('limit_too_large', {
        detail: `\`limit\` must be at most ${max}, got ${requested}`,
        extensions: { max_limit: max },
      });
    },
  });
}
