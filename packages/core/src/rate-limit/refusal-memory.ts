/**
 * What a limiter remembers of the refusals a shared store gave, so that a key certain to
 * be refused again is refused in process, without a round trip:
 *
 * - **rate limits**: the store's theoretical arrival times (TAT) of the key's pairs and its
 *   owner's, and how far at most the store's clock runs ahead of this one. A TAT only
 *   moves later (other instances' requests), never earlier, and the store's clock is read
 *   at its latest possible value, so a request that GCRA refuses on the remembered TATs is
 *   refused by the store too; once they would admit it, the store is asked again.
 * - **quotas**: the credits left when a request of the same cost was refused. Credits only
 *   go down until the quota's next refill (by this instance's clock, as every spend counts
 *   periods) or a new `setAt`, so until then the same request is refused again.
 *
 * A remembered refusal holds only for the same settings objects it was decided under
 * (the key's policies, owner and quota, which the keyring replaces when an administrator
 * changes them and the revocation bus evicts the key on every instance): a changed key is
 * asked about again. Requests answered from here are not counted in the store (counting
 * them is the round trip this saves). Bounded: at most `max` keys, evicted by second chance.
 * @module
 */
import { LruCache, type LruSlot } from '../internal/lru-cache.ts';
import type { SpentQuota } from '../quota/quota-spender.ts';
import { evaluateGcra, type GcraParameters } from './gcra.ts';
import type { LimitRequest } from './limit-request.ts';
import type { RateLimitDecision } from './types.ts';

/** Internal: one key's remembered refusal. */
interface RememberedRefusal extends LruSlot {
  readonly policies: LimitRequest['policies'];
  readonly owner: LimitRequest['owner'];
  readonly quota: LimitRequest['quota'];
  /** The cost of the request a quota refused (a request of another cost is asked about). */
  readonly cost: number;
  readonly parameters: readonly GcraParameters[];
  /** Each pair's TAT, µs by the store's clock, after the refused request. */
  readonly tats: readonly number[];
  /** At most how far the store's clock runs ahead of this one, µs. */
  readonly leadMicros: number;
  /** The quotas' decisions, when a quota refused. */
  readonly quotas: readonly SpentQuota[] | undefined;
}

/** Internal: a refusal certain now; `quotas` set when it is the quota's. */
export interface RecalledRefusal {
  readonly decisions: RateLimitDecision[];
  readonly quotas: SpentQuota[] | undefined;
}

/** Internal: not exported from the package. */
export interface RefusalMemory {
  /** The refusal the store would give `request` at `now` (epoch ms, this clock), if certain. */
  recall(request: LimitRequest, now: number): RecalledRefusal | undefined;
  /**
   * Remembers a refusal: `tats` after the decision, by the store's clock, which read
   * `storeMicros` no earlier than this clock read `sentAt` (ms). `quotas` when a quota refused.
   */
  remember(request: LimitRequest, parameters: readonly GcraParameters[], tats: readonly number[], storeMicros: number, sentAt: number, quotas?: readonly SpentQuota[]): void;
}

/** Longest a quota refusal is held without a refill date (a one-off budget): until its key changes. */
const NEVER = Number.MAX_SAFE_INTEGER;

export function createRefusalMemory(max: number): RefusalMemory {
  const cache = new LruCache<RememberedRefusal>(max);

  function recall(request: LimitRequest, now: number): RecalledRefusal | undefined {
    const entry = cache.get(request.key, now);
    if (entry === undefined) return undefined;
    if (entry.policies !== request.policies || entry.owner !== request.owner || entry.quota !== request.quota) {
      cache.delete(request.key);
      return undefined;
    }
    const storeNow = now * 1000 + entry.leadMicros;
    const outcome = evaluateGcra(
      entry.parameters.map((parameters, i) => ({ parameters, tat: entry.tats[i] })),
      storeNow,
      1,
    );
    if (!outcome.allowed) return { decisions: outcome.decisions, quotas: undefined };
    const { quotas } = entry;
    if (quotas === undefined) {
      // The rate limits would admit it now: the store decides again.
      cache.delete(request.key);
      return undefined;
    }
    // A request refused anyway (scopes, in-flight cap) spends no credit; another cost may fit.
    if (request.refusal !== undefined || request.cost !== entry.cost) return undefined;
    return {
      decisions: outcome.decisions,
      quotas: quotas.map((q) => (q.retryAfterSeconds > 0 && q.nextRefillAt !== null ? { ...q, retryAfterSeconds: Math.max(1, Math.ceil((q.nextRefillAt.getTime() - now) / 1000)) } : q)),
    };
  }

  function remember(request: LimitRequest, parameters: readonly GcraParameters[], tats: readonly number[], storeMicros: number, sentAt: number, quotas?: readonly SpentQuota[]): void {
    const leadMicros = storeMicros - sentAt * 1000;
    let until: number;
    if (quotas === undefined) {
      // Past the latest TAT no pair can refuse: the entry is worth nothing then.
      let latest = 0;
      for (const tat of tats) latest = Math.max(latest, tat);
      until = Math.ceil((latest - leadMicros) / 1000) + 1;
    } else {
      until = NEVER;
      for (const q of quotas) if (!q.allowed && q.nextRefillAt !== null) until = Math.min(until, q.nextRefillAt.getTime());
    }
    cache.set(
      request.key,
      { policies: request.policies, owner: request.owner, quota: request.quota, cost: request.cost, parameters, tats, leadMicros, quotas, until: 0, hit: 0 },
      until,
    );
  }

  return Object.freeze({ recall, remember });
}
