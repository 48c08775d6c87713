/** Public exports of the rate-limit area. Names are listed explicitly. */
export { evaluateGcra, gcraParameters, prepareGcra, rateLimitPolicyProblem } from './gcra.ts';
export type { GcraOutcome, GcraParameters } from './gcra.ts';
export { createMemoryRateLimitStore } from './memory-store.ts';
export type { MemoryRateLimitStore, MemoryRateLimitStoreOptions } from './memory-store.ts';
export { headerFormats, rateLimitHeaders } from './rate-limit-headers.ts';
export type { HeaderFormats, RateLimitHeaderFormat, RateLimitHeaderOptions } from './rate-limit-headers.ts';
export { createRateLimiter } from './rate-limiter.ts';
export type { RateLimitLogger, RateLimiterOptions, RateLimiterWithState, StoreErrorMode } from './rate-limiter.ts';
export type {
  RateLimitCheckOptions,
  RateLimitCheckResult,
  RateLimitDecision,
  RateLimitPolicy,
  RateLimitRequest,
  RateLimitStore,
  RateLimiter,
} from './types.ts';
export type { DecisionEvent, DecisionHook, DecisionOutcome } from './decision-event.ts';
