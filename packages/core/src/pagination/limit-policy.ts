/**
 * Page-size policy: every list endpoint has a default and a hard maximum, so no client
 * can ask for an unpaginated collection; and optionally a largest offset, so no client
 * can make the database skip more rows than the deployment allows.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { LimitPolicy } from './types.ts';

/** A validated {@link LimitPolicy} that resolves a request's page size. */
export interface LimitResolver extends LimitPolicy {
  /** Page size for a syntactically valid `limit` (or none). Throws `limit_too_large` under `reject`. */
  resolve(requested: number | undefined): number;
  /** The offset for a syntactically valid `offset`. Throws `offset_too_large` past `maxOffset`. */
  resolveOffset(requested: number): number;
}

/** Every name a limit policy knows (the paginator's `limits` too). Internal. */
export const LIMIT_OPTIONS: KnownOptions<LimitPolicy> = { default: true, max: true, overMax: true, maxOffset: true };

/**
 * Validates a limit policy (integers, `1 ≤ default ≤ max`, `overMax` known, `maxOffset` a
 * non-negative integer when given) and fills in `{ default: 20, max: 100, overMax:
 * 'reject' }` (the default page size is `min(20, max)` when only `max` is given; no
 * `maxOffset` means any offset). Throws `ConfigError` when bad.
 *
 * @example
 * ```ts
 * const limits = createLimitPolicy({ max: 50, overMax: 'clamp', maxOffset: 10_000 });
 * limits.resolve(500); // → 50
 * limits.resolveOffset(20_000); // throws KeysetError offset_too_large (max_offset: 10000)
 * ```
 */
export function createLimitPolicy(options: Partial<LimitPolicy> = {}): LimitResolver {
  assertKnownOptions('createLimitPolicy', options, LIMIT_OPTIONS);
  const { max = 100, overMax = 'reject', maxOffset } = options;
  // `{ max: 10 }` alone means "at most 10", not a config error about the implicit 20.
  const byDefault = options.default ?? Math.min(20, max);
  if (!Number.isSafeInteger(max) || max < 1) throw new ConfigError(`limits.max must be a positive integer, got ${String(max)}`);
  if (!Number.isSafeInteger(byDefault) || byDefault < 1 || byDefault > max) {
    throw new ConfigError(`limits.default must be an integer between 1 and limits.max (${max}), got ${String(byDefault)}`);
  }
  if (overMax !== 'reject' && overMax !== 'clamp') throw new ConfigError(`limits.overMax must be 'reject' or 'clamp', got ${String(overMax)}`);
  if (maxOffset !== undefined && (!Number.isSafeInteger(maxOffset) || maxOffset < 0)) {
    throw new ConfigError(`limits.maxOffset must be a non-negative integer (or absent for no limit), got ${String(maxOffset)}`);
  }
  return Object.freeze({
    default: byDefault,
    max,
    overMax,
    ...(maxOffset === undefined ? {} : { maxOffset }),
    resolve(requested: number | undefined): number {
      if (requested === undefined) return byDefault;
      if (requested <= max) return requested;
      if (overMax === 'clamp') return max;
      throw new KeysetError('limit_too_large', {
        detail: `\`limit\` must be at most ${max}, got ${requested}`,
        extensions: { max_limit: max },
      });
    },
    resolveOffset(requested: number): number {
      if (maxOffset === undefined || requested <= maxOffset) return requested;
      throw new KeysetError('offset_too_large', {
        detail: `\`offset\` must be at most ${maxOffset}, got ${requested}`,
        extensions: { max_offset: maxOffset },
      });
    },
  });
}
