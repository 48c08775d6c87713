/**
 * GCRA (generic cell rate algorithm, ITU-T I.371) as pure integer arithmetic, shared by
 * every store: the memory store runs it directly, `@keyset/redis` runs the same
 * comparison in Lua and rebuilds its decisions here, so both answer identically.
 *
 * Time is in integer microseconds. Each key stores one number, its theoretical arrival
 * time (TAT). With emission interval `T = window / limit` and burst `B = burst · T`
 * (the delay-variation tolerance τ plus one interval), a request of `cost` is admitted
 * when `max(TAT, now) + cost · T − B ≤ now`. All values stay below 2^53, so doubles
 * hold them exactly and nothing drifts.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest } from './types.ts';

const MICROS_PER_SECOND = 1_000_000;
/** Largest window: one year. Keeps `now + B` far below 2^53 µs. */
const MAX_WINDOW_SECONDS = 366 * 24 * 3600;
/** Largest burst allowance in µs (about 31 years), same reason. */
const MAX_BURST_MICROS = 1e15;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A validated policy with its GCRA constants in microseconds. */
export interface GcraParameters {
  readonly policy: RateLimitPolicy;
  /** Policy name for headers and storage keys (`policy.name ?? 'default'`). */
  readonly name: string;
  /** Emission interval T in µs: `ceil(windowSeconds · 10⁶ / limit)`. */
  readonly emissionMicros: number;
  /** `burst · T` in µs: how far the TAT may run ahead of now. */
  readonly burstMicros: number;
  readonly burst: number;
  /** `policy.mode === 'observe'`: decided and counted, never refusing (see `evaluateGcra`). */
  readonly observe: boolean;
}

/**
 * Why `policy` is not a valid rate-limit policy, or `undefined` when it is.
 *
 * @example
 * ```ts
 * rateLimitPolicyProblem({ limit: 0, windowSeconds: 60 }); // 'limit must be a positive integer, got 0'
 * ```
 */
export function rateLimitPolicyProblem(policy: unknown): string | undefined {
  if (typeof policy !== 'object' || policy === null) return 'a policy must be an object { limit, windowSeconds }';
  const { limit, windowSeconds, burst, name } = policy as Record<string, unknown>;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) return `limit must be a positive integer, got ${String(limit)}`;
  if (!Number.isSafeInteger(windowSeconds) || (windowSeconds as number) < 1 || (windowSeconds as number) > MAX_WINDOW_SECONDS) {
    // Whole seconds: the `w` parameter of RateLimit-Policy is an integer number of seconds.
    return `windowSeconds must be a whole number of seconds from 1 to ${MAX_WINDOW_SECONDS}, got ${String(windowSeconds)}`;
  }
  if ((limit as number) > (windowSeconds as number) * MICROS_PER_SECOND) {
    return `limit ${String(limit)} per ${String(windowSeconds)}s is finer than one microsecond per request`;
  }
  if (burst !== undefined && (!Number.isSafeInteger(burst) || (burst as number) < 1)) {
    return `burst must be a positive integer, got ${String(burst)}`;
  }
  if (name !== undefined && (typeof name !== 'string' || !NAME.test(name))) {
    return `name must be 1-64 characters of A-Z a-z 0-9 _ . -, got ${JSON.stringify(name)}`;
  }
  const { mode } = policy as Record<string, unknown>;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'observe') return `mode must be 'enforce' or 'observe', got ${JSON.stringify(mode)}`;
  const emission = Math.ceil(((windowSeconds as number) * MICROS_PER_SECOND) / (limit as number));
  if (emission * ((burst as number | undefined) ?? (limit as number)) > MAX_BURST_MICROS) {
    return 'burst · windowSeconds / limit is too large (more than 31 years)';
  }
  return undefined;
}

/**
 * Validates `policy` and computes its GCRA constants. Throws `ConfigError` when invalid.
 * The emission interval is rounded up to a whole microsecond, so a store never admits
 * more than `limit` per window (at worst a few microseconds fewer per window).
 *
 * @example
 * ```ts
 * gcraParameters({ limit: 10, windowSeconds: 60 }); // { emissionMicros: 6_000_000, burstMicros: 60_000_000, … }
 * ```
 */
export function gcraParameters(policy: RateLimitPolicy): GcraParameters {
  const problem = rateLimitPolicyProblem(policy);
  if (problem !== undefined) throw new ConfigError(`Invalid rate-limit policy: ${problem}`);
  const burst = policy.burst ?? policy.limit;
  const emissionMicros = Math.ceil((policy.windowSeconds * MICROS_PER_SECOND) / policy.limit);
  return Object.freeze({
    policy,
    name: policy.name ?? 'default',
    emissionMicros,
    burstMicros: emissionMicros * burst,
    burst,
    observe: policy.mode === 'observe',
  });
}

/**
 * Validates one decision's input for a store: each key a string, each policy valid,
 * no (key, policy name) pair twice, and `cost` a whole number from 0 (a peek) up to
 * the smallest burst (a larger cost could never be admitted). Throws `ConfigError`.
 *
 * @example
 * ```ts
 * const parameters = prepareGcra([{ key: 'key_1', policy: { limit: 10, windowSeconds: 1 } }], 1);
 * ```
 */
export function prepareGcra(requests: readonly RateLimitRequest[], cost: number): GcraParameters[] {
  if (!Array.isArray(requests) || requests.length === 0) throw new ConfigError('A decision needs at least one (key, policy) pair');
  if (!Number.isSafeInteger(cost) || cost < 0) throw new ConfigError(`cost must be a non-negative integer, got ${String(cost)}`);
  const seen = new Set<string>();
  return requests.map(({ key, policy }) => {
    if (typeof key !== 'string') throw new ConfigError(`A rate-limit key must be a string, got ${typeof key}`);
    const parameters = gcraParameters(policy);
    if (cost > parameters.burst) {
      throw new ConfigError(`cost ${cost} exceeds the burst ${parameters.burst} of policy "${parameters.name}": it could never be admitted`);
    }
    if (requests.length > 1) {
      // Policy names never contain a newline, so this id is unambiguous.
      const id = `${parameters.name}\n${key}`;
      if (seen.has(id)) throw new ConfigError(`A decision names the pair (key, policy "${parameters.name}") twice`);
      seen.add(id);
    }
    return parameters;
  });
}

/** The result of evaluating one decision over several pairs. */
export interface GcraOutcome {
  /** Whether every enforced pair admits (`true` when every pair is observed). */
  allowed: boolean;
  /**
   * Whether every observed pair admits too (`true` when there are none). Only meaningful
   * when `allowed`: a request the enforced pairs refuse is refused, whatever these say.
   */
  observedAllowed: boolean;
  decisions: RateLimitDecision[];
  /** TAT to store per pair when it advances (µs; see `advances`); otherwise nothing is stored. */
  newTats: number[];
}

/**
 * Decides all pairs at `now` (µs) given each pair's stored TAT (µs, `undefined` when
 * absent). The enforced pairs are all-or-nothing: `allowed` only if every one admits
 * `cost`. When denied, every decision says `allowed: false` and `remaining: 0`, and
 * `retryAfterSeconds` is non-zero only on the pairs that refused.
 *
 * Observed pairs (`mode: 'observe'`) never change `allowed`. Once the enforced pairs admit,
 * they are decided all-or-nothing among themselves, exactly as they would be if enforced:
 * admitted, they advance; one refusing (`observedAllowed: false`, the request would be
 * refused), none advances, as an enforced refusal stores nothing. So an observed pair's
 * TAT is the one it would have as the only enforced limit on the same traffic, and the
 * requests it would refuse are exactly those it refuses once enforced. A request the
 * enforced pairs refuse advances no pair.
 *
 * @example
 * ```ts
 * const p = gcraParameters({ limit: 10, windowSeconds: 60 });
 * evaluateGcra([{ parameters: p, tat: undefined }], Date.now() * 1000, 1).allowed; // true
 * ```
 */
export function evaluateGcra(
  pairs: readonly { parameters: GcraParameters; tat: number | undefined }[],
  now: number,
  cost: number,
): GcraOutcome {
  const tats: number[] = [];
  const newTats: number[] = [];
  let allowed = true;
  let observedAllowed = true;
  for (const { parameters, tat } of pairs) {
    const base = tat === undefined || tat < now ? now : tat;
    const next = base + cost * parameters.emissionMicros;
    tats.push(base);
    newTats.push(next);
    if (next - parameters.burstMicros > now) {
      if (parameters.observe) observedAllowed = false;
      else allowed = false;
    }
  }
  const decisions = pairs.map(({ parameters }, i): RateLimitDecision => {
    const base = tats[i] as number;
    const next = newTats[i] as number;
    if (allowed && (observedAllowed || !parameters.observe)) {
      return {
        allowed: true,
        policy: parameters.policy,
        remaining: Math.floor((parameters.burstMicros - (next - now)) / parameters.emissionMicros),
        resetSeconds: ceilSeconds(next - now),
        retryAfterSeconds: 0,
      };
    }
    return {
      allowed: false,
      policy: parameters.policy,
      remaining: 0,
      resetSeconds: ceilSeconds(base - now),
      retryAfterSeconds: ceilSeconds(next - parameters.burstMicros - now),
    };
  });
  return { allowed, observedAllowed, decisions, newTats };
}

/** Whether pair `i` of `outcome` advances (its `newTats[i]` is stored): see `evaluateGcra`. */
export function advances(outcome: GcraOutcome, parameters: GcraParameters): boolean {
  return outcome.allowed && (outcome.observedAllowed || !parameters.observe);
}

/** Whether `decisions` admit the request: every enforced one allowed (observed ones never refuse). */
export function enforcedAllowed(decisions: readonly RateLimitDecision[]): boolean {
  for (const d of decisions) if (!d.allowed && d.policy.mode !== 'observe') return false;
  return true;
}

/**
 * {@link evaluateGcra} for a single pair, without the arrays: the decision for one
 * (parameters, stored TAT) at `now`. The TAT to store when admitted is
 * `max(tat, now) + cost · emissionMicros`. Same arithmetic, same decisions.
 *
 * @example
 * ```ts
 * const p = gcraParameters({ limit: 10, windowSeconds: 60 });
 * evaluateOne(p, undefined, Date.now() * 1000, 1).remaining; // 9
 * ```
 */
export function evaluateOne(parameters: GcraParameters, tat: number | undefined, now: number, cost: number): RateLimitDecision {
  const base = tat === undefined || tat < now ? now : tat;
  const next = base + cost * parameters.emissionMicros;
  if (next - parameters.burstMicros <= now) {
    return {
      allowed: true,
      policy: parameters.policy,
      remaining: Math.floor((parameters.burstMicros - (next - now)) / parameters.emissionMicros),
      resetSeconds: ceilSeconds(next - now),
      retryAfterSeconds: 0,
    };
  }
  return {
    allowed: false,
    policy: parameters.policy,
    remaining: 0,
    resetSeconds: ceilSeconds(base - now),
    retryAfterSeconds: ceilSeconds(next - parameters.burstMicros - now),
  };
}

/** Whole seconds, rounded up (a client that waits this long will succeed); never negative. */
function ceilSeconds(micros: number): number {
  return micros <= 0 ? 0 : Math.ceil(micros / MICROS_PER_SECOND);
}
