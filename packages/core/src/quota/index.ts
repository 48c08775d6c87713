/** Public exports of the quota area. Names are listed explicitly. */
export { checkQuotaSpend } from './check-quota-spend.ts';
export { createMemoryQuotaStore } from './memory-quota-store.ts';
export type { MemoryQuotaStore } from './memory-quota-store.ts';
export {
  MAX_QUOTA_COST,
  MAX_QUOTA_CREDITS,
  applyQuotaSpend,
  quotaIntervalProblem,
  quotaPeriod,
  quotaPeriodStart,
  quotaProblem,
  quotaSpend,
} from './quota-period.ts';
export type { QuotaState } from './quota-period.ts';
export type { Quota, QuotaDecision, QuotaInterval, QuotaRefill, QuotaSpend, QuotaStore, QuotaStoreResult } from './types.ts';
