/**
 * Time source. Every factory that needs "now" takes one, so tests drive time by hand.
 * @module
 */

/** Returns milliseconds since the Unix epoch. */
export type Clock = () => number;

/**
 * The wall clock.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ clock: systemClock });
 * ```
 */
export const systemClock: Clock = (): number => Date.now();
