/**
 * Attribute names and the few bounded values keyset records. Every value here comes from
 * configuration (route names, store names) or from a closed list (problem codes, outcomes):
 * never a key, a key id, a raw path or a client address.
 * @module
 */
import { isKeysetError } from '@keyset/core';
import type { Attributes } from '@opentelemetry/api';

/** What the guard decided: `allowed`, a problem `code` (`rate_limited`, `invalid_api_key`, …), or `error` for a failure that is not keyset's. */
export const OUTCOME = 'keyset.outcome';
/** With `keyset.outcome` `would_refuse` (served, but an observed limit would have refused it): `rate_limited`, `quota_exhausted` or `concurrency_limited`. */
export const WOULD_REFUSE_REASON = 'keyset.would_refuse.reason';
/** The store's name as the application gave it to `telemetry.store(name, store)`. */
export const STORE = 'keyset.store';
/** The store method that was called (`decide`, `findByDigest`, …). */
export const STORE_OPERATION = 'keyset.store.operation';
/** The key's owner id, only with `ownerAttribute: true` (its cardinality is your number of owners). */
export const OWNER = 'keyset.owner.id';
/** Where a key lookup was answered from: `hit`, `negative_hit` (the keyring's caches) or `miss` (the store). */
export const CACHE_RESULT = 'keyset.cache.result';
/** Whether a usage flush reached the store: `ok` or `failed` (kept and retried). */
export const FLUSH_RESULT = 'keyset.flush.result';
/** The change a revocation-bus publish carried: `revoked`, `rotated` or `updated`. */
export const REVOCATION_TYPE = 'keyset.revocation.type';
/** Whether every other instance confirmed a revocation-bus publish in time: `acknowledged` or `timed_out`. */
export const REVOCATION_RESULT = 'keyset.revocation.result';
/** Set when a limiter store failed and its `onStoreError` fallback decided (`local`, `open`). */
export const DEGRADED = 'keyset.degraded';
/** OpenTelemetry semantic conventions: the route template, the method, the class of a failure. */
export const HTTP_ROUTE = 'http.route';
export const HTTP_METHOD = 'http.request.method';
export const ERROR_TYPE = 'error.type';

/** `GET /api/orders` → method and route template, as the HTTP conventions name them. */
const METHOD_AND_PATH = /^([A-Z]+) (\/\S*)$/;

/**
 * The attributes of a route name as adapters pass it (`apiKey({ route })`): a name of the
 * form `METHOD /template` gives `http.request.method` and `http.route`; any other name goes
 * to `http.route` as it is. Route names are configuration, so the set stays bounded.
 */
export function routeAttributes(route: string | undefined): Attributes {
  if (route === undefined) return {};
  const match = METHOD_AND_PATH.exec(route);
  return match === null ? { [HTTP_ROUTE]: route } : { [HTTP_METHOD]: match[1], [HTTP_ROUTE]: match[2] };
}

/** The outcome of a failed check: the problem code of a keyset error, else `error`. */
export function outcomeOf(error: unknown): string {
  return isKeysetError(error) ? error.code : 'error';
}

/** Whether a failure is a server's (5xx class): only those mark a span as failed. */
export function isServerFailure(error: unknown): boolean {
  return isKeysetError(error) ? error.status >= 500 : true;
}

/** `error.type` for a failure: the problem code of a keyset error, else the error's class name. */
export function errorType(error: unknown): string {
  if (isKeysetError(error)) return error.code;
  return error instanceof Error ? error.name : 'Error';
}
