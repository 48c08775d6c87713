/**
 * Usage: requests per outcome and credits spent, per key and per owner, in minute, hour
 * and day buckets. The counter (`usage-counter.ts`) adds events up in memory and hands a
 * store one batch of deltas per flush; a store adds them to every bucket size at once, so
 * the hour and day rows always equal the sum of their minutes (until minutes are pruned).
 * @module
 */
import type { DecisionOutcome } from '../rate-limit/decision-event.ts';
import type { WouldRefuseReason } from '../rate-limit/limit-mode.ts';

/** A bucket size. Buckets are aligned in UTC: a day bucket starts at 00:00Z. */
export type UsageInterval = 'minute' | 'hour' | 'day';

/**
 * What usage counts a request as: its `DecisionOutcome`, with `would_refuse` split by
 * reason (`would_refuse_rate_limited`, …): admitted and served, but an observed (shadow)
 * limit would have refused it for that reason.
 */
export type UsageOutcome = Exclude<DecisionOutcome, 'would_refuse'> | `would_refuse_${WouldRefuseReason}`;

/** Requests per outcome (every `UsageOutcome`, zeros included). */
export type UsageRequests = Record<UsageOutcome, number>;

/** What a bucket (or a total) holds. */
export interface UsageCounts {
  requests: UsageRequests;
  /** Quota credits spent (by admitted requests). */
  credits: number;
}

/** One bucket of a `read`: its start (epoch ms, aligned to the interval) and counts. */
export interface UsageBucket extends UsageCounts {
  start: number;
}

/**
 * What one flush adds for one key in one minute. `requests` lists counts in the order of
 * `USAGE_OUTCOMES`. Built by the counter; a store only adds it up.
 */
export interface UsageDelta {
  keyId: string;
  /** The key's owner, `null` without one (its requests then count for the key only). */
  ownerId: string | null;
  /** The minute's start, epoch ms (a multiple of 60 000). */
  minute: number;
  requests: readonly number[];
  credits: number;
}

/**
 * What makes a flush count once: the counter's instance (a random id per counter) and the
 * flush's sequence number, strictly increasing per instance. A store records the highest
 * sequence it applied per instance in the same write as the counts, and adds nothing for a
 * batch whose sequence is not above it: a retry of a batch that did commit (its reply was
 * lost, or the client gave up on a statement the server then ran) is a no-op.
 */
export interface UsageFlushToken {
  /** Non-empty, at most 100 characters; unique per counter (never reused after a restart). */
  instance: string;
  /** A positive safe integer; each new batch of an instance takes a higher one, its retries the same. */
  sequence: number;
}

/** Whose usage a `read` returns: one key, or every key of one owner added up. */
export type UsageSubject = { keyId: string; ownerId?: undefined } | { ownerId: string; keyId?: undefined };

/** A `read`: buckets of `interval` from the one holding `from` up to (not including) `to`. */
export type UsageQuery = UsageSubject & {
  /** Epoch ms; aligned down to the interval. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  interval: UsageInterval;
};

/** What `top` ranks by: every request, or only the refused ones (every outcome but `allowed` and the `would_refuse_*` ones, which were served). */
export type UsageRanking = 'requests' | 'refusals';

/** A `top` query: the keys with the most requests (or refusals) in the range, most first. */
export interface UsageTopQuery {
  from: number;
  to: number;
  /** The bucket size the range is read in (and aligned to). @default 'hour' */
  interval?: UsageInterval;
  by: UsageRanking;
  /** 1 to 100. */
  limit: number;
}

/** One key of a `top` answer. */
export interface UsageTopItem {
  keyId: string;
  requests: number;
  refusals: number;
  credits: number;
}

/** How long buckets of each size are kept, in days. */
export interface UsageRetention {
  /** @default 2 */
  minute?: number;
  /** @default 90 */
  hour?: number;
  /** @default 730 */
  day?: number;
}

/**
 * Where usage is kept. `add` is ONE write for the whole batch (a store shared by several
 * instances adds, never overwrites, so their flushes sum exactly); with a `token`, a batch
 * whose sequence its instance already reached adds nothing (the counter always passes one).
 * `read` answers dense buckets, zeros included, oldest first.
 */
export interface UsageStore {
  add(deltas: readonly UsageDelta[], token?: UsageFlushToken): Promise<void>;
  read(query: UsageQuery): Promise<UsageBucket[]>;
  top(query: UsageTopQuery): Promise<UsageTopItem[]>;
  /** Deletes buckets older than the retention allows at `now` (epoch ms); resolves with how many rows went. */
  prune(now: number): Promise<number>;
}
