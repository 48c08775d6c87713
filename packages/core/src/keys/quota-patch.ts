/**
 * A quota as an update sets it, merged with the quota it replaces. The merge belongs to the
 * store's write (the memory store calls this function, `@keyset/postgres` does the same in
 * its UPDATE), so two updates at once cannot both read one quota and write over each other.
 * @module
 */
import type { Quota, QuotaRefill } from '../quota/types.ts';
import type { LimitMode } from '../rate-limit/limit-mode.ts';

/** A quota to set: `refill` left out keeps the current one; `setAt` is the update's instant. */
export interface QuotaPatch {
  remaining: number;
  refill?: QuotaRefill | null;
  setAt: Date;
  /** Left out keeps the current quota's mode (enforced when there is none). */
  mode?: LimitMode;
}

/**
 * The quota `patch` leaves after `current`: the current refill when the patch names none,
 * and a `setAt` at least one millisecond after the current one, since a quota store
 * restarts its count only for a later `setAt` (two updates in one millisecond included).
 *
 * @example
 * ```ts
 * applyQuotaPatch({ remaining: 5, refill: null, setAt: new Date(10) }, { remaining: 9, setAt: new Date(10) });
 * // { remaining: 9, refill: null, setAt: new Date(11) }
 * ```
 */
export function applyQuotaPatch(current: Quota | null | undefined, patch: QuotaPatch): Quota {
  const setAt = current && current.setAt >= patch.setAt ? new Date(current.setAt.getTime() + 1) : patch.setAt;
  const { mode = current?.mode, ...rest } = patch;
  return withMode({ refill: current?.refill ?? null, ...rest, setAt }, mode);
}

/** `current` with its mode switched to `mode` (left out: as it is), its count kept; `null` stays `null`. */
export function modeSwitched(current: Quota | null, mode: LimitMode | undefined): Quota | null {
  return current === null || mode === undefined ? current : withMode(current, mode);
}

/**
 * `quota` with `mode` (only `'observe'` is stored: enforced is the default), its count
 * kept: `setAt` does not move, so a quota store goes on from where it is.
 *
 * @example
 * ```ts
 * withMode({ remaining: 5, refill: null, setAt: new Date(10) }, 'observe'); // { …, mode: 'observe' }
 * ```
 */
export function withMode(quota: Quota, mode: LimitMode | undefined): Quota {
  const { mode: _old, ...rest } = quota;
  return mode === 'observe' ? { ...rest, mode } : rest;
}
