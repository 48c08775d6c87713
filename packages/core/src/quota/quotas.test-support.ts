/**
 * The quotas the quota spender's and the request quotas' tests spend from, all set at
 * `T0`, where the tests' clocks start.
 */
import type { Quota } from './types.ts';

/** When every quota here was set. */
export const T0 = Date.UTC(2026, 0, 1);

/** A quota of `remaining` credits that never refills. */
export const oneOff = (remaining: number): Quota => ({ remaining, refill: null, setAt: new Date(T0) });

/** A quota of `remaining` credits, refilled by `amount` (by default `remaining`) every hour. */
export const hourly = (remaining: number, amount = remaining): Quota => ({ remaining, refill: { amount, interval: 3600 }, setAt: new Date(T0) });
