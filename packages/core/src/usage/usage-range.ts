/**
 * Bucket arithmetic shared by the counter, every usage store and the routes that read
 * them: the outcome order of a delta, bucket sizes, the largest range one read may cover,
 * checking a query, and filling the buckets a store found into the dense list `read` answers.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { UsageBucket, UsageInterval, UsageOutcome, UsageQuery, UsageRequests, UsageTopQuery } from './types.ts';

/** Every outcome, in the order of `UsageDelta.requests` (and of the stores' columns). */
export const USAGE_OUTCOMES: readonly UsageOutcome[] = Object.freeze([
  'allowed',
  'rate_limited',
  'quota_exhausted',
  'insufficient_scope',
  'concurrency_limited',
  'unavailable',
  'would_refuse_rate_limited',
  'would_refuse_quota_exhausted',
  'would_refuse_concurrency_limited',
]);

/** The outcomes of served requests: `allowed` and the `would_refuse_*` ones; every other one is a refusal. */
export const SERVED_OUTCOMES: readonly UsageOutcome[] = Object.freeze(['allowed', 'would_refuse_rate_limited', 'would_refuse_quota_exhausted', 'would_refuse_concurrency_limited']);

/** Milliseconds per bucket of each size. */
export const USAGE_INTERVAL_MS: Readonly<Record<UsageInterval, number>> = Object.freeze({ minute: 60_000, hour: 3_600_000, day: 86_400_000 });

/**
 * The most buckets one read covers: a day of minutes, a 31-day month of hours, a bit over
 * a year of days. Bounds the work and the answer of one query whatever the range asked.
 */
export const MAX_USAGE_BUCKETS: Readonly<Record<UsageInterval, number>> = Object.freeze({ minute: 1440, hour: 744, day: 400 });

const INTERVALS = new Set<string>(['minute', 'hour', 'day']);

/** Whether `value` names a bucket size. */
export function isUsageInterval(value: unknown): value is UsageInterval {
  return typeof value === 'string' && INTERVALS.has(value);
}

/** The start of the bucket of `interval` holding `at` (epoch ms, UTC). */
export function usageBucketStart(at: number, interval: UsageInterval): number {
  const size = USAGE_INTERVAL_MS[interval];
  return Math.floor(at / size) * size;
}

/** How many buckets `read` answers for this range: from the bucket holding `from` to the last one starting before `to`. */
export function usageBucketCount(from: number, to: number, interval: UsageInterval): number {
  const start = usageBucketStart(from, interval);
  return to <= start ? 0 : Math.ceil((to - start) / USAGE_INTERVAL_MS[interval]);
}

/** Zero counts, a fresh object. */
export function emptyUsageRequests(): UsageRequests {
  return {
    allowed: 0,
    rate_limited: 0,
    quota_exhausted: 0,
    insufficient_scope: 0,
    concurrency_limited: 0,
    unavailable: 0,
    would_refuse_rate_limited: 0,
    would_refuse_quota_exhausted: 0,
    would_refuse_concurrency_limited: 0,
  };
}

/**
 * Checks a `read` or `top` range; throws `ConfigError` saying what is wrong (a route
 * checks its query itself first, to answer 400). Returns the aligned start.
 */
export function checkUsageRange(query: Pick<UsageQuery, 'from' | 'to' | 'interval'>): number {
  const { from, to, interval } = query;
  if (!isUsageInterval(interval)) throw new ConfigError(`interval must be 'minute', 'hour' or 'day', got ${JSON.stringify(interval)}`);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to <= from) {
    throw new ConfigError(`from and to must be epoch milliseconds with from < to, got ${String(from)} and ${String(to)}`);
  }
  const count = usageBucketCount(from, to, interval);
  if (count > MAX_USAGE_BUCKETS[interval]) {
    throw new ConfigError(`a usage range covers at most ${MAX_USAGE_BUCKETS[interval]} ${interval} buckets, this one ${count}`);
  }
  return usageBucketStart(from, interval);
}

/** Checks a `read`'s subject and range (see `checkUsageRange`). */
export function checkUsageQuery(query: UsageQuery): number {
  const { keyId, ownerId } = query;
  if ((keyId === undefined) === (ownerId === undefined)) throw new ConfigError('a usage read names exactly one of keyId and ownerId');
  const id = keyId ?? ownerId;
  if (typeof id !== 'string' || id.length === 0) throw new ConfigError('keyId or ownerId must be a non-empty string');
  return checkUsageRange(query);
}

/** Checks a `top` query; returns its interval and aligned start. */
export function checkUsageTopQuery(query: UsageTopQuery): { interval: UsageInterval; from: number } {
  const { interval = 'hour', by, limit } = query;
  if (by !== 'requests' && by !== 'refusals') throw new ConfigError(`by must be 'requests' or 'refusals', got ${JSON.stringify(by)}`);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw new ConfigError(`limit must be an integer from 1 to 100, got ${String(limit)}`);
  return { interval, from: checkUsageRange({ from: query.from, to: query.to, interval }) };
}

/**
 * The dense buckets of a range, oldest first: each bucket from `from` (aligned) up to `to`
 * takes what `found` holds for its start, else zeros.
 */
export function denseUsageBuckets(found: ReadonlyMap<number, UsageBucket>, from: number, to: number, interval: UsageInterval): UsageBucket[] {
  const size = USAGE_INTERVAL_MS[interval];
  const buckets: UsageBucket[] = [];
  for (let start = usageBucketStart(from, interval); start < to; start += size) {
    buckets.push(found.get(start) ?? { start, requests: emptyUsageRequests(), credits: 0 });
  }
  return buckets;
}

/** A part of a range read from one bucket size: `[from, to)`, both aligned to `interval`. */
export interface UsageSegment {
  interval: UsageInterval;
  from: number;
  to: number;
}

/**
 * The fewest rows that sum a range: `[from, to)`, both whole minutes, split into day
 * buckets for the whole days inside it, hour buckets for the whole hours left, and minute
 * buckets only for the ragged ends (under an hour each). A day row equals the sum of its
 * hours and an hour the sum of its minutes, so the total is the same, read from up to
 * 1,440 times fewer rows: a day's `top` at minute interval reads one row per key, not 1,440.
 */
export function usageSegments(from: number, to: number): UsageSegment[] {
  const hour = USAGE_INTERVAL_MS.hour;
  const day = USAGE_INTERVAL_MS.day;
  const up = (at: number, size: number): number => Math.ceil(at / size) * size;
  const down = (at: number, size: number): number => Math.floor(at / size) * size;
  const fromHour = up(from, hour);
  const toHour = down(to, hour);
  if (fromHour >= toHour) return from < to ? [{ interval: 'minute', from, to }] : [];
  const segments: UsageSegment[] = [];
  if (from < fromHour) segments.push({ interval: 'minute', from, to: fromHour });
  const fromDay = up(fromHour, day);
  const toDay = down(toHour, day);
  if (fromDay >= toDay) {
    segments.push({ interval: 'hour', from: fromHour, to: toHour });
  } else {
    if (fromHour < fromDay) segments.push({ interval: 'hour', from: fromHour, to: fromDay });
    segments.push({ interval: 'day', from: fromDay, to: toDay });
    if (toDay < toHour) segments.push({ interval: 'hour', from: toDay, to: toHour });
  }
  if (toHour < to) segments.push({ interval: 'minute', from: toHour, to });
  return segments;
}

/**
 * The range a `top` ranks over, as segments: from the bucket of `interval` holding `from`
 * to the end of the last bucket starting before `to` (what the same range's `read` covers).
 */
export function usageTopSegments(from: number, to: number, interval: UsageInterval): UsageSegment[] {
  const size = USAGE_INTERVAL_MS[interval];
  return usageSegments(usageBucketStart(from, interval), Math.ceil(to / size) * size);
}

/** Internal: the retention in days of each bucket size, defaults filled, checked. */
export function usageRetention(retention: { minute?: number; hour?: number; day?: number } = {}): Readonly<Record<UsageInterval, number>> {
  const { minute = 2, hour = 90, day = 730 } = retention;
  for (const [name, days] of [['minute', minute], ['hour', hour], ['day', day]] as const) {
    if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) throw new ConfigError(`retention.${name} must be a positive number of days, got ${String(days)}`);
  }
  return Object.freeze({ minute, hour, day });
}

/** Internal: the oldest bucket start each size keeps at `now`. */
export function usageCutoffs(now: number, retention: Readonly<Record<UsageInterval, number>>): Record<UsageInterval, number> {
  const day = USAGE_INTERVAL_MS.day;
  return {
    minute: usageBucketStart(now - retention.minute * day, 'minute'),
    hour: usageBucketStart(now - retention.hour * day, 'hour'),
    day: usageBucketStart(now - retention.day * day, 'day'),
  };
}
