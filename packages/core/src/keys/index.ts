/** Public exports of the keys area. Names are listed explicitly. */
export { apiKeyCheckOptions, createApiKeyGuard, guardReadsForwardedFor } from './api-key-guard.ts';
export type { ApiKeyGuard, ApiKeyGuardCheckOptions, ApiKeyGuardOptions, ApiKeyGuardRequest, ApiKeyGuardResult } from './api-key-guard.ts';
export { MAX_IP_ALLOWLIST } from './ip-allowlist.ts';
export { MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_METADATA_ENTRIES } from './key-metadata.ts';
export type { JsonValue, KeyMetadata } from './key-metadata.ts';
export { digestKey } from './key-digest.ts';
export type { DigestKeyOptions } from './key-digest.ts';
export { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, generateKey, isValidKeyPrefix, keyPattern, parseKey } from './key-format.ts';
export type { ParseKeyResult, ParsedKey } from './key-format.ts';
export type { IssueKeyInput, KeyListPlan, QuotaInput, RotateKeyOptions, UpdateKeyInput, UpdateLimitsInput } from './key-input.ts';
export { keyListSort } from './key-list-sort.ts';
export type { KeyListSort } from './key-list-sort.ts';
export type {
  KeyRateLimit,
  QuotaJson,
  KeyRecord,
  KeyRecordJson,
  SecretRecord,
  SecretRecordJson,
  VerifiedKey,
  VerifiedKeyJson,
} from './key-record.ts';
export type { IdentityLimitsPatch, KeyStore, ListIdentitiesQuery, StoredIdentity, StoredKey, StoredSecret } from './key-store.ts';
export { createKeyring } from './keyring.ts';
export type {
  AuthenticateOptions,
  AuthenticateRequest,
  IssuedKey,
  KeyChangeEvent,
  KeyChangeListener,
  KeyListResult,
  Keyring,
  KeyringCacheOptions,
  KeyringLogger,
  KeyringOptions,
} from './keyring.ts';
export { createMemoryKeyStore } from './memory-key-store.ts';
export { createRevocationProtocol, isRevocationEvent } from './revocation-protocol.ts';
export type { RevocationBusLogger, RevocationEvent, RevocationProtocol, RevocationProtocolOptions } from './revocation-protocol.ts';
export { CREDENTIAL_QUERY_PARAMS, redactUrl } from './query-credentials.ts';
export { redactKey } from './redact-key.ts';
export { redactText } from './redact-text.ts';
export { isValidScope, missingScopes } from './scopes.ts';
