/**
 * @keyset/core/adapter: the contract for writing an adapter (a framework's request →
 * core input, core result → response), a store (keys, rate limits, quotas) or a
 * revocation bus. Application code needs none of it: `@keyset/core` is its entry.
 * @module
 */

// Requests: query strings, paths, methods, problems
export { PROBLEM_CONTENT_TYPE } from './errors.ts';
export { parseQueryString, queryStringOf } from './pagination/page-query.ts';
export { contentTypeError, hostError, requestError, requestInstance, requestPathError } from './request-error.ts';
export type { RequestFacts } from './request-error.ts';
export { scrubSyntaxError } from './scrub-syntax-error.ts';
export { clientErrorStatus, schemaValidationError } from './client-error.ts';
export { methodNotAllowed, routeMethods } from './method-not-allowed.ts';
export type { RouteEntry } from './method-not-allowed.ts';

// Options: every factory refuses a name it does not know, with a ConfigError naming the closest one
export { assertKnownOptions, closestName } from './internal/check-options.ts';
export type { KnownOptions, OptionRule, OptionShape } from './internal/check-options.ts';

// The guard, as adapters drive it, by transport: Web `Request`/`Response` (Hono, Fetch)
// and Node's `http` (Express, Fastify)
export { apiKeyCheckOptions } from './auth/api-key-guard.ts';
export { finishWebResponse, webBodyPending, webGuardRequest } from './http/web-transport.ts';
export { nodeBodyPending, nodeGuardRequest, releaseWhenClosed } from './http/node-transport.ts';
export type { NodeIncomingRequest, NodeServerResponse } from './http/node-transport.ts';
export type { NodeIncomingBody } from './http/web-transport.ts';

// Pagination building blocks (what `createPaginator` composes)
export { createLimitPolicy, parsePageQuery } from './pagination/page-query.ts';
export type { LimitResolver, PageQuery, ParsePageQueryOptions } from './pagination/page-query.ts';
export { createSortParam } from './pagination/sort-param.ts';
export type { SortParam } from './pagination/sort-param.ts';
export { fetchSort, reverseSortSpec } from './pagination/sort-spec.ts';
export { pageItems } from './pagination/paginator.ts';
export { SORT_VALUES_FIELD } from './internal/sort-values.ts';
export { exactSortColumns } from './pagination/keyset-where.ts';
export type { ExactSortColumn } from './pagination/keyset-where.ts';
export { cursorFingerprint } from './cursor/cursor-fingerprint.ts';
export { isValidHost, normalizeBaseUrl, pageLinks, requestOrigin } from './pagination/page-links.ts';
export type { KeepParam, PageLinkTarget, PageRel } from './pagination/page-links.ts';
export { resolveTotalPolicy, settleTotal } from './pagination/total-policy.ts';
export type { SettledTotal, TotalPolicy } from './pagination/total-policy.ts';

// Key stores: record shapes and the bounds every store must hold
export type { IdentityLimitsPatch, ListIdentitiesQuery, PepperCount, PepperRehash, StoredIdentity, StoredKey, StoredSecret } from './keys/key-store.ts';
export { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, isValidKeyPrefix } from './keys/key-format.ts';
export { MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_METADATA_ENTRIES } from './keys/key-metadata.ts';
export { MAX_IP_ALLOWLIST } from './auth/ip-allowlist.ts';
export { isValidScope, missingScopes } from './keys/scopes.ts';
export { CREDENTIAL_QUERY_PARAMS } from './auth/query-credentials.ts';

// Revocation buses
export { createRevocationProtocol, isRevocationEvent } from './admin/revocation-protocol.ts';
export type { RevocationBusLogger, RevocationEvent, RevocationProtocol, RevocationProtocolOptions, RevocationPublished } from './admin/revocation-protocol.ts';

// Rate-limit stores: the one GCRA every store runs
export { advances, enforcedAllowed, evaluateGcra, gcraParameters, prepareGcra, rateLimitPolicyProblem } from './rate-limit/gcra.ts';
export type { GcraOutcome, GcraParameters } from './rate-limit/gcra.ts';
export { headerFormats } from './rate-limit/rate-limit-headers.ts';
export type { HeaderFormats } from './rate-limit/rate-limit-headers.ts';

// Usage stores: the checks and bucket arithmetic every store shares
export { checkUsageDeltas, checkUsageFlushToken } from './usage/check-usage-deltas.ts';
export {
  MAX_USAGE_BUCKETS,
  USAGE_INTERVAL_MS,
  SERVED_OUTCOMES,
  USAGE_OUTCOMES,
  checkUsageQuery,
  checkUsageRange,
  checkUsageTopQuery,
  denseUsageBuckets,
  emptyUsageRequests,
  isUsageInterval,
  usageBucketCount,
  usageBucketStart,
  usageCutoffs,
  usageRetention,
  usageSegments,
  usageTopSegments,
} from './usage/usage-range.ts';
export type { UsageSegment } from './usage/usage-range.ts';

// Quota stores
export { checkQuotaSpend, checkQuotaSpends } from './quota/check-quota-spend.ts';
export {
  MAX_QUOTA_COST,
  MAX_QUOTA_CREDITS,
  applyQuotaSpend,
  applyQuotaSpends,
  quotaIntervalProblem,
  quotaPeriod,
  quotaPeriodStart,
  quotaProblem,
  quotaSpend,
} from './quota/quota-period.ts';
export type { QuotaState } from './quota/quota-period.ts';
export type { QuotaSpend, QuotaStoreResult } from './quota/types.ts';
export { isLaterQuotaState, laterQuotaState } from './quota/durable-quota.ts';
export type { DurableQuotaEntry, DurableQuotaStore } from './quota/durable-quota.ts';

// Audit: what a server serving the log needs (its actions, its order, request ids)
export { AUDIT_ACTIONS, auditListSort } from './audit/audit-store.ts';
export { listAudit } from './audit/list-audit.ts';
export { isWellFormedRequestId, requestIdFrom } from './audit/request-id.ts';

// Instants clients send: one format and one range for every route
export { MAX_INSTANT_MS, MIN_INSTANT_MS, isInstantInRange, parseInstant } from './instant.ts';

// Store calls: deadlines and silence
export { createSilenceWatch, withTimeout } from './internal/silence-timeout.ts';
export type { SilenceWatch } from './internal/silence-timeout.ts';

// Runtime seams
export { systemClock } from './clock.ts';
export { constantTimeEqual } from './crypto/crypto-provider.ts';
// Permission queries as the guard evaluates them, for checks of one's own (a resolver, a job).
export { grantsQuery, missingPermissions, permissionQuery } from './auth/permission-query.ts';
