/**
 * Usage routes (scope `keys:admin`): `GET /api/keys/{id}/usage`, `GET /api/owners/{id}/usage`
 * and `GET /api/usage/top`. Requests per outcome and credits spent, read from the usage
 * store the key services' counter writes to (docs/usage.md). Every query parameter is
 * checked here, so a bad one is a 400 naming it, never a store error.
 * The store given here reads through `Database.usageReads`: connections, a statement
 * timeout and a limit of reads at once of their own (429 `usage_reads_busy` past it).
 * @module
 */
import {
  createKeyAdmin,
  createOwnerAdmin,
  type Keyring,
  type UsageBucket,
  type UsageInterval,
  type UsageRanking,
  type UsageRequests,
  type UsageStore,
} from '@keyset/core';
import { denseUsageBuckets, isUsageInterval, MAX_USAGE_BUCKETS, MIN_INSTANT_MS, USAGE_INTERVAL_MS, USAGE_OUTCOMES, usageBucketCount, usageBucketStart } from '@keyset/core/adapter';
import type { AppResponse } from './app-types.ts';
import { instantParam, invalid, isIntegerIn, singleParam } from './validation.ts';

/**
 * Buckets a range holds when the query gives no `from`: the last hour by minute, the last
 * day by hour, the last 30 days by day. Each fits `MAX_USAGE_BUCKETS`, so a query that
 * names only an interval (or only `to`) is always answered, and the CLI's table stays
 * readable (60 rows, not 1,440).
 */
export const DEFAULT_USAGE_BUCKETS: Readonly<Record<UsageInterval, number>> = Object.freeze({ minute: 60, hour: 24, day: 30 });

/** A read's range, checked: `from` and `to` as given or defaulted, `interval`. */
interface UsageRange {
  from: number;
  to: number;
  interval: UsageInterval;
}

/**
 * `from`, `to` and `interval` of a query. Defaults: interval = hour, to = now, and from =
 * the start of the `DEFAULT_USAGE_BUCKETS` whole buckets ending with the one holding the
 * last instant before `to` (the bucket in progress, when `to` is now). Only a range the
 * client asked for can exceed the cap, and its 400 names `from`, which it then sent.
 */
export function usageRange(query: URLSearchParams, now: number): UsageRange {
  const interval = singleParam(query, 'interval') ?? 'hour';
  if (!isUsageInterval(interval)) throw invalid('interval', '`interval` must be minute, hour or day');
  const to = instantParam(query, 'to')?.getTime() ?? now;
  const from = instantParam(query, 'from')?.getTime();
  if (from === undefined) {
    // The range every route accepts starts at 0001-01-01Z: a default never reaches past it.
    if (to <= MIN_INSTANT_MS) throw invalid('to', '`to` must be after 0001-01-01T00:00:00Z when `from` is not given');
    const last = usageBucketStart(to - 1, interval);
    return { from: Math.max(MIN_INSTANT_MS, last - (DEFAULT_USAGE_BUCKETS[interval] - 1) * USAGE_INTERVAL_MS[interval]), to, interval };
  }
  if (from >= to) throw invalid('from', query.has('to') ? '`from` must be before `to`' : '`from` must be before `to`, which is now when not given');
  const count = usageBucketCount(from, to, interval);
  if (count > MAX_USAGE_BUCKETS[interval]) {
    throw invalid('from', `This range holds ${count} ${interval} buckets; at most ${MAX_USAGE_BUCKETS[interval]} per request: shorten it or use a larger interval`);
  }
  return { from, to, interval };
}

function totals(buckets: readonly UsageBucket[]): { requests: UsageRequests; credits: number } {
  const requests = Object.fromEntries(USAGE_OUTCOMES.map((o) => [o, 0])) as UsageRequests;
  let credits = 0;
  for (const bucket of buckets) {
    for (const outcome of USAGE_OUTCOMES) requests[outcome] += bucket.requests[outcome];
    credits += bucket.credits;
  }
  return { requests, credits };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The usage handlers over `store`; `keyring` answers 404 for a key or owner that does not exist. */
export function createUsageAdminHandlers(deps: { keyring: Keyring; store: UsageStore; now?: () => number }) {
  const { store, now = Date.now } = deps;
  const keys = createKeyAdmin(deps.keyring);
  const owners = createOwnerAdmin(deps.keyring);
  async function read(subject: { keyId: string } | { ownerId: string }, query: URLSearchParams): Promise<AppResponse> {
    const { from, to, interval } = usageRange(query, now());
    // The store counts from 1970 on (epoch milliseconds); an earlier part of the range, which
    // every route takes alike (0001-01-01Z on), has zero buckets.
    const stored = to > 0 ? await store.read({ ...subject, from: Math.max(from, 0), to, interval }) : [];
    const buckets = denseUsageBuckets(new Map(stored.map((b) => [b.start, b])), from, to, interval);
    return {
      status: 200,
      body: {
        ...subject,
        interval,
        from: iso(usageBucketStart(from, interval)),
        to: iso(to),
        buckets: buckets.map((b) => ({ start: iso(b.start), requests: b.requests, credits: b.credits })),
        totals: totals(buckets),
      },
    };
  }

  return Object.freeze({
    /** `GET /api/keys/{id}/usage`: 404 like `GET /api/keys/{id}` for a key that does not exist. */
    async key(id: string, query: URLSearchParams): Promise<AppResponse> {
      usageRange(query, now());
      await keys.get(id);
      return read({ keyId: id }, query);
    },
    /** `GET /api/owners/{id}/usage`: every key of the owner added up. */
    async owner(id: string, query: URLSearchParams): Promise<AppResponse> {
      usageRange(query, now());
      await owners.get(id);
      return read({ ownerId: id }, query);
    },
    /** `GET /api/usage/top?by=requests|refusals&limit=10`: the keys with the most, most first. */
    async top(query: URLSearchParams): Promise<AppResponse> {
      const { from, to, interval } = usageRange(query, now());
      const by = singleParam(query, 'by') ?? 'requests';
      if (by !== 'requests' && by !== 'refusals') throw invalid('by', '`by` must be requests or refusals');
      const limitText = singleParam(query, 'limit') ?? '10';
      const limit = /^[0-9]{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
      if (!isIntegerIn(limit, 1, 100)) throw invalid('limit', '`limit` must be a whole number from 1 to 100');
      const items = to > 0 ? await store.top({ from: Math.max(from, 0), to, interval, by: by as UsageRanking, limit }) : [];
      return { status: 200, body: { from: iso(usageBucketStart(from, interval)), to: iso(to), by, items } };
    },
  });
}
