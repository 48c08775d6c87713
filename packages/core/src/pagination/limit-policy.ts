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
  /** The policy alone, frozen, without the methods: what a paginator shows as its `limits`. */
  readonly policy: LimitPolicy;
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
  checkInteger('max', max, 1, Infinity, 'a positive integer');
  checkInteger('default', byDefault, 1, max, `an integer between 1 and limits.max (${max})`);
  if (overMax !== 'reject' && overMax !== 'clamp') throw new ConfigError(`limits.overMax must be 'reject' or 'clamp', got ${String(overMax)}`);
  checkInteger('maxOffset', maxOffset ?? 0, 0, Infinity, 'a non-negative integer');
  const policy: LimitPolicy = Object.freeze({ default: byDefault, max, overMax, maxOffset });
  return Object.freeze({
    ...policy,
    policy,
    resolve(requested: number | undefined): number {
      if (requested === undefined) return byDefault;
      if (requested <= max || overMax === 'clamp') return Math.min(requested, max);
      throw tooLarge('limit', requested, max);
    },
    resolveOffset(requested: number): number {
      // Without a limit, the offset is its own: every offset passes.
      if (requested <= (maxOffset ?? requested)) return requested;
      throw tooLarge('offset', requested, maxOffset!);
    },
  });
}

/** A `ConfigError` unless `value` is a safe integer from `min` to `max`. */
function checkInteger(name: string, value: number, min: number, max: number, rule: string): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new ConfigError(`limits.${name} must be ${rule}, got ${String(value)}`);
}

/** The 400 for a `limit` or `offset` over its maximum, with the maximum as `max_limit` or `max_offset`. */
function tooLarge(name: 'limit' | 'offset', requested: number, limit: number): KeysetError {
  return new KeysetError(`${name}_too_large`, {
    detail: `\`${name}\` must be at most ${limit}, got ${requested}`,
    extensions: { [`max_${name}`]: limit },
  });
}
