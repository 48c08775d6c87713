/**
 * The limiter's quotas, without a store: which counts a request spends from (its key's
 * quota, counted inside the owner's Cluster partition when the key has an owner, so the
 * count stays put whether or not the owner has a quota, and its owner's, counted as
 * `owner:<id>`), what the spender's decisions of them mean for the request, and the 429
 * when either falls short. The limiter asks the spender (`quota-spender.ts`) in between.
 * @module
 */
import { KeysetError } from '../errors.ts';
import type { LimitRequest } from '../rate-limit/limit-request.ts';
import type { RateLimitLogger, WouldRefusal } from '../rate-limit/types.ts';
import { ownerQuotaKey, quotaProblem } from './quota-period.ts';
import type { QuotaEntry, SpentQuota } from './quota-spender.ts';
import type { Quota } from './types.ts';

/** Internal: what spending a request's cost did. */
export interface SpentQuotas {
  /** Whether every quota covered the cost (and so spent it). */
  readonly allowed: boolean;
  /** Credits really spent: none when refused, or when the quota store failed open (admitted uncounted). */
  readonly cost: number;
  /** The key's quota, when it has one. */
  readonly key: SpentQuota | undefined;
  /** The owner's quota, when the key's owner has one. */
  readonly owner: SpentQuota | undefined;
  /** Every enforced quota that refused. */
  readonly refusing: readonly SpentQuota[];
  /** An observed (shadow) quota that could not cover the cost (the key's before the owner's): nothing was spent from it. */
  readonly wouldRefuse: WouldRefusal | undefined;
}

/** Internal: not exported from the package. */
export interface RequestQuotas {
  /** The quotas `request` spends from: its key's, then its owner's (throws 503 for an invalid one). */
  entriesOf(request: LimitRequest): QuotaEntry[];
  /** What spending `request.cost` did, from one decision per entry of `entriesOf` (`undefined`: an observed quota not decided). */
  summary(request: LimitRequest, spent: readonly (SpentQuota | undefined)[]): SpentQuotas;
  /** `quota` when it can be spent from, else 503 `unavailable` (logged once per quota object). */
  usableQuota(key: string, quota: Quota): Quota;
}

/** Creates the quota part of a limiter. */
export function createRequestQuotas(logger: RateLimitLogger): RequestQuotas {
  const reported = new WeakSet<object>();

  function usableQuota(key: string, quota: Quota): Quota {
    const why = quotaProblem(quota) ?? (quota.setAt instanceof Date && Number.isFinite(quota.setAt.getTime()) ? undefined : 'setAt must be a valid Date');
    if (why === undefined) return quota;
    // Credits are a budget: an unreadable quota neither waves the key through nor spends
    // from someone else's count. 503, logged once per quota object.
    if (!reported.has(quota)) {
      reported.add(quota);
      logger.warn({ key, problem: why }, 'refusing a request whose key has an invalid quota');
    }
    throw new KeysetError('unavailable', { detail: 'Usage quotas are temporarily unavailable; retry shortly.' });
  }

  function entriesOf({ key, quota, owner }: LimitRequest): QuotaEntry[] {
    const entries: QuotaEntry[] = [];
    if (quota !== null) entries.push(owner === null ? { key, quota: usableQuota(key, quota) } : { key, quota: usableQuota(key, quota), partition: ownerQuotaKey(owner.id) });
    const ownerQuota = owner?.quota ?? null;
    if (owner !== null && ownerQuota !== null) entries.push({ key: ownerQuotaKey(owner.id), quota: usableQuota(ownerQuotaKey(owner.id), ownerQuota) });
    return entries;
  }

  return Object.freeze({ entriesOf, summary, usableQuota });
}

/**
 * What spending `request.cost` did, from one decision per quota it spends from (the key's,
 * then the owner's; `undefined` for an observed quota that was not decided). `cost` counts
 * the enforced quotas only: an observed quota's credits are not the client's bill.
 */
function summary(request: LimitRequest, spent: readonly (SpentQuota | undefined)[]): SpentQuotas {
  const keyQuota = request.quota;
  const ownerQuota = request.owner?.quota ?? null;
  const key = keyQuota === null ? undefined : spent[0];
  const owner = ownerQuota === null ? undefined : spent[spent.length - 1];
  const modes = [keyQuota, ownerQuota].filter((q) => q !== null).map((q) => q.mode === 'observe');
  const enforced = spent.filter((s, i): s is SpentQuota => s !== undefined && modes[i] !== true);
  const refusing = enforced.filter((s) => !s.allowed);
  const allowed = refusing.length === 0;
  const cost = !allowed || enforced.length === 0 || enforced.some((s) => s.degraded !== undefined) ? 0 : request.cost;
  let wouldRefuse: WouldRefusal | undefined;
  if (allowed && key !== undefined && keyQuota?.mode === 'observe' && !key.allowed) wouldRefuse = { reason: 'quota_exhausted', policy: 'quota' };
  else if (allowed && owner !== undefined && ownerQuota?.mode === 'observe' && !owner.allowed) wouldRefuse = { reason: 'quota_exhausted', policy: 'owner.quota' };
  return { allowed, cost, key, owner, refusing, wouldRefuse };
}

/**
 * The 429 for a request a quota refused: the key's quota is named when it ran out, else
 * the owner's; how much is left of it, never whose (the owner id) or what any other key
 * spent. `Retry-After` only when a wait helps every quota that refused.
 */
export function quotaExhaustedError(request: LimitRequest, spent: SpentQuotas, headers: Record<string, string>): KeysetError {
  const short = spent.key !== undefined && !spent.key.allowed ? spent.key : (spent.owner as SpentQuota);
  const whose = short === spent.key ? 'key' : 'owner';
  const retryAfter = spent.refusing.some((s) => s.retryAfterSeconds === 0) ? 0 : Math.max(...spent.refusing.map((s) => s.retryAfterSeconds));
  const quotaHeaders: Record<string, string> = { ...headers };
  const extensions: Record<string, unknown> = { quota: whose, quota_remaining: short.remaining, cost: request.cost };
  if (retryAfter > 0) {
    quotaHeaders['retry-after'] = String(retryAfter);
    extensions.retry_after = retryAfter;
  }
  const what = whose === 'key' ? 'Usage quota exhausted' : "Owner's usage quota (shared by all its keys) exhausted";
  return new KeysetError('quota_exhausted', {
    detail:
      retryAfter > 0
        ? `${what}: ${short.remaining} credits left, this request costs ${request.cost}; it refills in ${retryAfter} s.`
        : `${what}: ${short.remaining} credits left, this request costs ${request.cost}.`,
    headers: quotaHeaders,
    extensions,
  });
}
