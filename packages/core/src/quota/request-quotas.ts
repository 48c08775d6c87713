/**
 * The limiter's quotas: what a request spends from its key's quota (counted inside the
 * owner's Cluster partition when the key has an owner, so the count stays put whether or
 * not the owner has a quota) and from its owner's (counted as `owner:<id>`), both or
 * neither, and the 429 when either falls short.
 * @module
 */
import { KeysetError, isKeysetError } from '../errors.ts';
import type { LimitRequest } from '../rate-limit/limit-request.ts';
import type { RateLimitLogger } from '../rate-limit/types.ts';
import { ownerQuotaKey, quotaProblem } from './quota-period.ts';
import type { QuotaEntry, QuotaSpender, SpentQuota } from './quota-spender.ts';
import type { Quota, QuotaDecision } from './types.ts';

/** Internal: what a request's `spend` did. */
export interface SpentQuotas {
  /** Whether every quota covered the cost (and so spent it). */
  readonly allowed: boolean;
  /** Credits really spent: none when refused, or when the quota store failed open (admitted uncounted). */
  readonly cost: number;
  /** The key's quota, when it has one. */
  readonly key: SpentQuota | undefined;
  /** The owner's quota, when the key's owner has one. */
  readonly owner: SpentQuota | undefined;
  /** Every quota that refused. */
  readonly refusing: readonly SpentQuota[];
}

/** Internal: not exported from the package. */
export interface RequestQuotas {
  /** Whether `request` has a quota to spend from (its key's or its owner's). */
  spends(request: LimitRequest): boolean;
  /** Spends `request.cost`; rejects with 503 `unavailable` (carrying `headers`) while the quota store fails closed. */
  spend(request: LimitRequest, headers: Record<string, string>): Promise<SpentQuotas>;
  /** The quotas `request` spends from, in the order `spend` spends them (throws 503 for an invalid one). */
  entriesOf(request: LimitRequest): QuotaEntry[];
  /** What spending `request.cost` did, from one decision per entry of `entriesOf`. */
  summary(request: LimitRequest, spent: readonly SpentQuota[]): SpentQuotas;
  /** Reads a key's quota (spends nothing, refills if due). */
  read(key: string, quota: Quota, ownerId: string | undefined): Promise<QuotaDecision>;
}

/** Creates the quota part of a limiter over `spender`. */
export function createRequestQuotas(spender: QuotaSpender, logger: RateLimitLogger): RequestQuotas {
  const reported = new WeakSet<object>();

  function usable(key: string, quota: Quota): Quota {
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
    if (quota !== null) entries.push(owner === null ? { key, quota: usable(key, quota) } : { key, quota: usable(key, quota), partition: ownerQuotaKey(owner.id) });
    const ownerQuota = owner?.quota ?? null;
    if (owner !== null && ownerQuota !== null) entries.push({ key: ownerQuotaKey(owner.id), quota: usable(ownerQuotaKey(owner.id), ownerQuota) });
    return entries;
  }

  async function spend(request: LimitRequest, headers: Record<string, string>): Promise<SpentQuotas> {
    let spent: SpentQuota[];
    try {
      spent = await spender.spendAll(entriesOf(request), request.cost);
    } catch (error) {
      throw isKeysetError(error) ? new KeysetError(error.code, { detail: error.detail, cause: error.cause, headers: { ...headers, ...error.headers } }) : error;
    }
    return summary(request, spent);
  }

  return Object.freeze({
    entriesOf,
    summary,
    spends: (request: LimitRequest): boolean => request.quota !== null || (request.owner?.quota ?? null) !== null,
    spend,
    async read(key: string, quota: Quota, ownerId: string | undefined): Promise<QuotaDecision> {
      return ownerId === undefined ? spender.spend(key, usable(key, quota), 0) : spender.spend(key, usable(key, quota), 0, ownerQuotaKey(ownerId));
    },
  });
}

/** What spending `request.cost` did, from one decision per quota it spends from. */
function summary(request: LimitRequest, spent: readonly SpentQuota[]): SpentQuotas {
  const key = request.quota === null ? undefined : spent[0];
  const owner = (request.owner?.quota ?? null) === null ? undefined : spent[spent.length - 1];
  const refusing = spent.filter((s) => !s.allowed);
  const allowed = refusing.length === 0;
  return { allowed, cost: !allowed || spent.some((s) => s.degraded !== undefined) ? 0 : request.cost, key, owner, refusing };
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
