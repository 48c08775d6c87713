/**
 * @keyset/core: signed keyset pagination, API-key authentication and per-key rate
 * limits for HTTP APIs, independent of any framework or runtime.
 *
 * This entry holds what an application author uses. What only adapter, store and
 * integration authors need lives in `@keyset/core/adapter` (./adapter.ts).
 * @module
 */

// Errors and RFC 9457 problems
export { AuthenticationError, ConfigError, ERROR_CATALOGUE, KeysetError, isKeysetError, toProblem } from './errors.ts';
export type {
  ErrorCatalogueEntry,
  ErrorCode,
  InvalidKeyReason,
  KeysetErrorOptions,
  ProblemDetails,
  ProblemResponse,
  ToProblemOptions,
} from './errors.ts';

// API keys
export { createKeyring } from './auth/keyring.ts';
export type {
  AuthenticateOptions,
  AuthenticateRequest,
  KeyChangeEvent,
  KeyChangeListener,
  KeyCacheResult,
  Keyring,
  KeyringCacheOptions,
  KeyringLogger,
  KeyringOptions,
} from './auth/keyring.ts';
export type { KeyringParts } from './auth/keyring-parts.ts';
export { createKeyAdmin } from './admin/key-admin.ts';
export type { AdminOptions, KeyAdmin, KeyListResult, PepperUsage } from './admin/key-admin.ts';

export type { AuditAction, AuditChange, AuditEntry, AuditFilters, AuditListSort, AuditQuery, AuditStore } from './audit/audit-store.ts';
export type { AuditContext } from './audit/audit-entry.ts';
export { createMemoryAuditStore } from './audit/memory-audit-store.ts';
export type { MemoryAuditStore } from './audit/memory-audit-store.ts';
export type { AuditListResult } from './audit/list-audit.ts';
export type { Pepper } from './keys/pepper-ring.ts';
export { createOwnerAdmin } from './admin/owner-admin.ts';
export { createRoleAdmin } from './admin/role-admin.ts';
export type { CreateRoleInput, HeldRoles, RoleAdmin, RoleRecord, UpdateRoleInput } from './admin/role-admin.ts';
export type { CreateOwnerInput, OwnerAdmin, OwnerListResult, OwnerRecord, UpdateOwnerInput } from './admin/owner-admin.ts';
export type { IssuedKey } from './admin/issued-key.ts';
export { createMemoryKeyStore } from './keys/memory-key-store.ts';
export type { MemoryKeyStoreOptions } from './keys/memory-key-store.ts';
export type { FoundKey, KeyStore, ListOwnersQuery, OwnerPatch, RolePatch, RoleTarget, StoredOwner, StoredRole } from './keys/key-store.ts';
export type { QuotaPatch } from './keys/quota-patch.ts';
export { createApiKeyGuard } from './auth/api-key-guard.ts';
export type { PermissionQuery } from './auth/permission-query.ts';
export type { ApiKeyGuard, ApiKeyGuardCheckOptions, ApiKeyGuardOptions, ApiKeyGuardRequest, ApiKeyGuardResult } from './auth/api-key-guard.ts';
export { generateKey, keyPattern, parseKey } from './keys/key-format.ts';
export { isWellFormedKey } from './keys/is-well-formed-key.ts';
export { createLeakAlertHandler } from './secret-scanning/leak-alert-handler.ts';
export type { LeakAlertHandler, LeakAlertHandlerOptions, LeakEvent, LeakPolicy } from './secret-scanning/leak-alert-handler.ts';
export { GITHUB_SECRET_SCANNING_KEYS_URL } from './secret-scanning/github-public-keys.ts';
export type { GitHubPublicKey, PublicKeySource } from './secret-scanning/github-public-keys.ts';
export type { ParseKeyResult, ParsedKey } from './keys/key-format.ts';
export { digestKey } from './keys/key-digest.ts';
export type { DigestKeyOptions } from './keys/key-digest.ts';
export { keyListSort } from './admin/key-list-sort.ts';
export type { KeyListSort } from './admin/key-list-sort.ts';
export type { IssueKeyInput, KeyListPlan, QuotaInput, RotateKeyOptions, UpdateKeyInput, UpdateLimitsInput } from './admin/key-input.ts';
export type { JsonValue, KeyMetadata } from './keys/key-metadata.ts';
export type {
  KeyRateLimit,
  KeyRecord,
  KeyRecordJson,
  QuotaJson,
  SecretRecord,
  SecretRecordJson,
  VerifiedKey,
  VerifiedKeyJson,
  VerifiedOwner,
} from './keys/key-record.ts';

// Redaction
export { redactKey } from './redaction/redact-key.ts';
export { containsKeyShapedText, redactText } from './redaction/redact-text.ts';
export { redactRuns } from './redaction/redact-runs.ts';
export { redactUrl } from './auth/query-credentials.ts';
export { redactUrlForLog } from './redaction/redact-url-for-log.ts';
export { clipInput } from './internal/clip-input.ts';
export { echoAuthScheme, echoContentCoding, echoMediaType } from './redaction/redact-echo.ts';
export { KEY_SCHEMES } from './auth/authorization-header.ts';
export type { KeyScheme } from './auth/authorization-header.ts';

// Pagination
export { createPaginator } from './pagination/paginator.ts';
export type { PageOptions, PageResult, Paginator, PaginatorOptions, PlanOptions, SliceArgs, SlicePlan, SliceResult } from './pagination/paginator.ts';
export { cursorSecrets } from './cursor/cursor-secrets.ts';
export type { CursorSecretsOptions } from './cursor/cursor-secrets.ts';
export { defineSortSpec } from './pagination/sort-spec.ts';
export type { SortableField } from './pagination/sort-param.ts';
export { keysetWhere } from './pagination/keyset-where.ts';
export type { KeysetQuery, KeysetWhereOptions, SqlDialect } from './pagination/keyset-where.ts';
export { paginateArray } from './pagination/paginate-array.ts';
export { isoTimestamp } from './pagination/iso-timestamp.ts';
export { countTotal } from './pagination/total-policy.ts';
export type { CountedTotal, TotalCounters, TotalOption } from './pagination/total-policy.ts';
export { createCursorCodec } from './cursor/cursor-codec.ts';
export type { CursorCodec, CursorCodecOptions, DecodedCursor } from './cursor/cursor-codec.ts';
export type { CursorScope } from './cursor/cursor-fingerprint.ts';
export type {
  CursorDirection,
  CursorPage,
  CursorPosition,
  LimitPolicy,
  OffsetPage,
  PagePlan,
  PaginationMode,
  SortDirection,
  SortKey,
  SortSpec,
  SortValue,
  SortValueType,
} from './pagination/types.ts';

// Rate limits and quotas
export { createRateLimiter } from './rate-limit/rate-limiter.ts';
export type { RateLimitLogger, RateLimiterOptions, RateLimiterWithState, StoreErrorMode } from './rate-limit/rate-limiter.ts';
export type {
  LimitMode,
  RateLimitCheckOptions,
  RateLimitCheckResult,
  RateLimitDecision,
  RateLimitPolicy,
  RateLimitRequest,
  RateLimitStore,
  RateLimiter,
  WouldRefusal,
  WouldRefuseReason,
} from './rate-limit/types.ts';
export type { DecisionEvent, DecisionHook, DecisionOutcome } from './rate-limit/decision-event.ts';
export type { RequestDecisionInput, RequestDecisionOutput, RequestStore } from './rate-limit/request-store.ts';
export { createMemoryRateLimitStore } from './rate-limit/memory-store.ts';
export type { MemoryRateLimitStore, MemoryRateLimitStoreOptions } from './rate-limit/memory-store.ts';
export { rateLimitHeaders } from './rate-limit/rate-limit-headers.ts';
export type { RateLimitHeaderFormat, RateLimitHeaderOptions } from './rate-limit/rate-limit-headers.ts';
export { createMemoryConcurrencyStore } from './concurrency/memory-concurrency-store.ts';
export type { MemoryConcurrencyStoreOptions } from './concurrency/memory-concurrency-store.ts';
export { createConcurrencyLimit } from './concurrency/concurrency-limit.ts';
export type { ConcurrencyLimit, ConcurrencyMax, ConcurrencyOptions, LeaseClaims, OwnerConcurrencyMax, ReleaseLease } from './concurrency/concurrency-limit.ts';
export type { ConcurrencyStore, LeaseClaim, LeaseDecision } from './concurrency/types.ts';
export { createMemoryQuotaStore } from './quota/memory-quota-store.ts';
export type { MemoryQuotaStore } from './quota/memory-quota-store.ts';
export type { Quota, QuotaDecision, QuotaInterval, QuotaRefill, QuotaStore } from './quota/types.ts';

// Usage counts
export { createUsageCounter } from './usage/usage-counter.ts';
export type { UsageCounter, UsageCounterOptions, UsageFlushEvent, UsageLogger } from './usage/usage-counter.ts';
export { createMemoryUsageStore } from './usage/memory-usage-store.ts';
export type { MemoryUsageStore, MemoryUsageStoreOptions } from './usage/memory-usage-store.ts';
export type {
  UsageBucket,
  UsageCounts,
  UsageDelta,
  UsageFlushToken,
  UsageInterval,
  UsageQuery,
  UsageRanking,
  UsageOutcome,
  UsageRequests,
  UsageRetention,
  UsageStore,
  UsageSubject,
  UsageTopItem,
  UsageTopQuery,
} from './usage/types.ts';

// Client addresses
export { createClientAddressResolver } from './net/client-address.ts';
export type { ClientAddressInput, ClientAddressResolver, TrustProxy } from './net/client-address.ts';
export { ipInCidrs } from './net/ip-in-cidrs.ts';

// Runtime seams
export { webCrypto } from './crypto/crypto.web.ts';
export type { CryptoProvider } from './crypto/crypto-provider.ts';
export type { Clock } from './clock.ts';
