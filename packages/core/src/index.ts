/**
 * @keyset/core: signed keyset pagination, API-key authentication and per-key rate
 * limits for HTTP APIs, independent of any framework or runtime.
 * @module
 */
export {
  AuthenticationError,
  ConfigError,
  ERROR_CATALOGUE,
  KeysetError,
  PROBLEM_CONTENT_TYPE,
  isKeysetError,
  toProblem,
} from './errors.ts';
export type {
  ErrorCatalogueEntry,
  ErrorCode,
  InvalidKeyReason,
  KeysetErrorOptions,
  ProblemDetails,
  ProblemResponse,
  ToProblemOptions,
} from './errors.ts';
export { methodNotAllowed } from './method-not-allowed.ts';
export { requestPathError } from './request-path.ts';
export { parseQueryString, queryStringOf } from './query-string.ts';
export { isPromiseLike, maybeSyncVariant } from './maybe-promise.ts';
export type { MaybePromise } from './maybe-promise.ts';
export { systemClock } from './clock.ts';
export type { Clock } from './clock.ts';
export { constantTimeEqual } from './crypto/crypto-provider.ts';
export type { CryptoProvider } from './crypto/crypto-provider.ts';
export { webCrypto } from './crypto/crypto.web.ts';
export { createSilenceWatch, withTimeout } from './internal/silence-timeout.ts';
export { clipInput } from './internal/clip-input.ts';
export type { SilenceWatch } from './internal/silence-timeout.ts';

export * from './pagination/index.ts';
export * from './keys/index.ts';
export * from './rate-limit/index.ts';
export * from './quota/index.ts';
export * from './net/index.ts';
